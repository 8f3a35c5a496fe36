package informer_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
)

// The falling-behind warning doubles its threshold while a backlog grows (4, 8, …),
// and starts again from the first threshold once the backlog has drained: a second
// burst, later, is a new problem and warns again.
func TestABacklogWarnsAgainAfterItDrained(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		logs := &logBuffer{}
		inf := newInformer(defaults, src, informer.Options[*corev1.ConfigMap]{BacklogWarning: 4, Logger: logs.logger()})
		_, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
			AddFunc: func(*corev1.ConfigMap, bool) { time.Sleep(time.Second) }, // fake time
		})
		require.NoError(t, err)
		running(t, inf)
		synctest.Wait()

		burst := func(prefix string, n int) {
			for i := range n {
				src.Create(cm(fmt.Sprint(prefix, i)))
				synctest.Wait() // one notification at a time: the backlog grows by one
			}
		}
		burst("first-", 9) // backlog 8 while the first call sleeps: warns at 4 and 8
		assert.Equal(t, 2, strings.Count(logs.String(), "falling behind"), logs.String())

		time.Sleep(time.Minute) // drains
		synctest.Wait()
		assert.Contains(t, logs.String(), "caught up")

		burst("second-", 5) // backlog 4: warns again at the first threshold
		assert.Equal(t, 3, strings.Count(logs.String(), "falling behind"), logs.String())
	})
}
