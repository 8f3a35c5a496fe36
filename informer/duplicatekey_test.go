package informer_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
	"github.com/kubeinternals/informers/reflector"
)

// listAppender is a fake apiserver whose LIST answers carry extra items after the
// real ones: a list with a key twice, which no apiserver sends but a ListerWatcher
// of the user's own might.
type listAppender struct {
	*fakeapi.Server[*corev1.ConfigMap]
	mu    sync.Mutex
	extra []*corev1.ConfigMap // guarded by mu
}

func (l *listAppender) List(ctx context.Context, opts metav1.ListOptions) (reflector.ListResult[*corev1.ConfigMap], error) {
	res, err := l.Server.List(ctx, opts)
	l.mu.Lock()
	defer l.mu.Unlock()
	res.Items = append(res.Items, l.extra...)
	return res, err
}

// A relist that lists a key twice leaves the cache at the last copy that can be
// indexed (or at its cached state when none can), and the last update the handlers
// got for that key shows the same state — with either queue. client-go
// (processReplacedAllInfo) swaps in the whole list, so its last copy wins too; it has
// no rejected copies (an IndexFunc error panics there).
func TestARelistWithAKeyTwiceEndsWhereTheHandlersWereToldItIs(t *testing.T) {
	cases := []struct {
		name      string
		first     map[string]string // the server's copy, listed first
		second    map[string]string // the extra copy, listed last
		wantColor string
	}{
		{"the last copy cannot be indexed: the first copy is cached", map[string]string{"color": "blue"}, map[string]string{"bad": "yes"}, "blue"},
		{"no copy can be indexed: the cache keeps its state", map[string]string{"bad": "yes"}, map[string]string{"bad": "yes"}, "red"},
		{"the first copy cannot be indexed: the last copy is cached", map[string]string{"bad": "yes"}, map[string]string{"color": "green"}, "green"},
		{"both copies can be indexed: the last copy is cached", map[string]string{"color": "blue"}, map[string]string{"color": "green"}, "green"},
	}
	for _, q := range pipelines {
		q.name = q.queue.String()
		for _, c := range cases {
			t.Run(q.name+"/"+c.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					src := &listAppender{Server: fakeapi.New[*corev1.ConfigMap]()}
					flip := src.Create(cm("flip", "color", "red"))
					inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](src, informer.Options[*corev1.ConfigMap]{
						// The duplicate arrives in a LIST answer (a watch-list's buffer keeps
						// one copy per key), so both queues are fed by LIST here.
						Queue: q.queue, InitialList: reflector.PagedList, Indexers: failOnBad(nil), Logger: (&logBuffer{}).logger(),
					})
					rec := &recorder{}
					_, err := inf.AddEventHandler(rec)
					require.NoError(t, err)
					running(t, inf)
					synctest.Wait()

					changeWhileDown(src.Server, func() {
						flip = flip.DeepCopy()
						flip.Data = c.first
						flip = src.Update(flip)
						dup := flip.DeepCopy()
						dup.Data = c.second
						dup.ResourceVersion += "-dup"
						src.mu.Lock()
						src.extra = []*corev1.ConfigMap{dup}
						src.mu.Unlock()
					})

					cached, ok, err := inf.Indexer().GetByKey("ns/flip")
					require.NoError(t, err)
					require.True(t, ok)
					assert.Equal(t, c.wantColor, cached.Data["color"])
					told := "1" // the add of the initial list
					for _, e := range rec.get() {
						if e.name == "flip" {
							told = e.rv
						}
					}
					assert.Equal(t, cached.ResourceVersion, told, "the handlers' last word on flip is the cached version; events: %v", rec.get())
				})
			})
		}
	}
}
