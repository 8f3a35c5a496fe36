package informer_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
	"github.com/kubeinternals/informers/trace"
)

// A trace sink that panics — on every event of every stage, including the ones a
// listener emits holding its lock (Buffered) and just before it calls the handler
// (HandlerCalled) — costs the sink its events and nothing else: the cache fills, every
// handler gets every notification, and the informer stops cleanly.
func TestAPanickingTraceSinkStopsNothing(t *testing.T) {
	for _, q := range pipelines {
		t.Run(q.name, func(t *testing.T) {
			useDefaultLogger(t) // the sink's panics are reported there; keep them out of the test's output
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				src.Create(cm("a"))
				inf := newInformer(q, src, informer.Options[*corev1.ConfigMap]{
					Tracer: trace.New(func(trace.Event) { panic("sink broke") }),
				})
				rec := &recorder{}
				_, err := inf.AddEventHandler(rec)
				require.NoError(t, err)
				_, stop := running(t, inf)
				synctest.Wait()
				src.Create(cm("b"))
				src.Update(cm("a", "k", "v"))
				synctest.Wait()

				assert.ElementsMatch(t, []string{"ns/a", "ns/b"}, inf.Indexer().ListKeys())
				assert.Equal(t, []string{"add a", "add b", "update a"}, rec.summary())
				stop()
			})
		})
	}
}
