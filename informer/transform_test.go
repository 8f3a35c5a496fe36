package informer_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
)

// A transform may change the object it is given in place, even clear its
// resourceVersion (client-go's TestTransformingInformer does): the informer still
// knows which resource version it has synced to, because the reflector reads it from
// each watch event before the queue's transform runs.
func TestATransformThatClearsTheResourceVersionDoesNotResetTheWatch(t *testing.T) {
	for _, q := range pipelines {
		t.Run(q.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				src.Create(cm("a"))
				inf := newInformer(q, src, informer.Options[*corev1.ConfigMap]{})
				require.NoError(t, inf.SetTransform(func(obj *corev1.ConfigMap) (*corev1.ConfigMap, error) {
					obj.ResourceVersion = ""
					return obj, nil
				}))
				rec := &recorder{}
				_, err := inf.AddEventHandler(rec)
				require.NoError(t, err)
				running(t, inf)
				synctest.Wait()

				src.Create(cm("b"))
				synctest.Wait()
				require.Equal(t, src.ResourceVersion(), inf.LastSyncResourceVersion())

				// The server ends the watch; the informer re-watches from where it was.
				src.CloseWatches()
				src.Create(cm("c"))
				synctest.Wait()
				watches := src.WatchCalls()
				require.Len(t, watches, 2)
				assert.NotEmpty(t, watches[1].ResourceVersion, "the re-watch resumes, it does not start over")
				assert.Equal(t, []string{"add a", "add b", "add c"}, rec.summary())
				assert.Equal(t, src.ResourceVersion(), inf.LastSyncResourceVersion())
			})
		})
	}
}
