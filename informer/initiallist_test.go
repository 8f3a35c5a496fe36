package informer_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
)

// TestARelistsAddsAreNotInTheInitialList: an object a relist finds new — created
// while the watch was down, its event compacted away — reaches the handler as an add
// with isInInitialList false on both pipelines, however the relist was fetched.
func TestARelistsAddsAreNotInTheInitialList(t *testing.T) {
	for _, q := range pipelines {
		t.Run(q.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				src.Create(cm("a"))
				inf := newInformer(q, src, informer.Options[*corev1.ConfigMap]{})
				rec := &recorder{}
				_, err := inf.AddEventHandler(rec)
				require.NoError(t, err)
				running(t, inf)
				synctest.Wait()
				require.True(t, inf.HasSynced())

				// The watch goes down and stays down while "late" is created; then the
				// history is compacted, so only a relist can find it.
				src.FailWatches(errors.New("apiserver unavailable"))
				src.CloseWatches()
				src.Create(cm("late"))
				src.Compact()
				src.FailWatches(nil)
				time.Sleep(time.Minute) // fake time: past any backoff
				synctest.Wait()

				var late []event
				for _, e := range rec.get() {
					if e.name == "late" {
						late = append(late, e)
					}
				}
				require.Len(t, late, 1, "the relist found it: %v", rec.get())
				assert.Equal(t, "add", late[0].kind)
				assert.False(t, late[0].isInInitialList, "a relist's add is not part of the initial list")
			})
		})
	}
}
