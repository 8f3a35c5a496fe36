package informer_test

import (
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
)

// failOnBad is an index function that fails for any object whose data has bad=yes,
// and blocks on gate for an object named "slow" (when gate is not nil).
func failOnBad(gate <-chan struct{}) indexer.Indexers[*corev1.ConfigMap] {
	return indexer.Indexers[*corev1.ConfigMap]{"color": func(obj *corev1.ConfigMap) ([]string, error) {
		if obj.Name == "slow" && gate != nil {
			<-gate
		}
		if obj.Data["bad"] == "yes" {
			return nil, errors.New("unexpected data")
		}
		return []string{obj.Data["color"]}, nil
	}}
}

// An object whose IndexFunc fails is the only one lost: the objects around it (in
// the same list, the same RealFIFO batch, or a relist) are cached and delivered, the
// failure is logged with the object's key, and the informer still syncs. An object
// already cached keeps the last state that could be indexed.
func TestAnObjectWhoseIndexFuncFailsIsTheOnlyOneLost(t *testing.T) {
	for _, q := range pipelines {
		t.Run(q.name+"/in the initial list", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				src.Create(cm("a", "color", "red"))
				src.Create(cm("bad", "bad", "yes"))
				src.Create(cm("c", "color", "blue"))
				logs := &logBuffer{}
				inf := newInformer(q, src, informer.Options[*corev1.ConfigMap]{Indexers: failOnBad(nil), Logger: logs.logger()})
				rec := &recorder{}
				reg, err := inf.AddEventHandler(rec)
				require.NoError(t, err)
				running(t, inf)
				synctest.Wait()

				assert.True(t, inf.HasSynced())
				assert.True(t, reg.HasSynced())
				assert.ElementsMatch(t, []string{"ns/a", "ns/c"}, inf.Indexer().ListKeys())
				assert.ElementsMatch(t, []string{"add a", "add c"}, rec.summary())
				assert.Contains(t, logs.String(), "key=ns/bad")
				assert.Contains(t, logs.String(), "unexpected data")
			})
		})

		t.Run(q.name+"/in a relist, where the cached state is kept", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				flip := src.Create(cm("flip", "color", "red"))
				src.Create(cm("b", "color", "red"))
				logs := &logBuffer{}
				inf := newInformer(q, src, informer.Options[*corev1.ConfigMap]{Indexers: failOnBad(nil), Logger: logs.logger()})
				rec := &recorder{}
				_, err := inf.AddEventHandler(rec)
				require.NoError(t, err)
				running(t, inf)
				synctest.Wait()

				changeWhileDown(src, func() {
					flip = flip.DeepCopy() // the server's object is the one the cache holds
					flip.Data = map[string]string{"bad": "yes"}
					src.Update(flip)
					src.Create(cm("new", "color", "green"))
				})

				assert.ElementsMatch(t, []string{"ns/flip", "ns/b", "ns/new"}, inf.Indexer().ListKeys())
				cached, ok, err := inf.Indexer().GetByKey("ns/flip")
				require.NoError(t, err)
				require.True(t, ok)
				assert.Equal(t, "red", cached.Data["color"], "the last state that could be indexed stays")
				assert.Contains(t, rec.summary(), "add new")
				assert.NotContains(t, rec.summary(), "delete flip (tombstone)", "flip was not deleted")
				assert.Contains(t, logs.String(), "key=ns/flip")
			})
		})
	}

	// A RealFIFO batch holds several objects; the one that fails must not take the
	// rest of the batch with it. (DeltaFIFO pops one key at a time, so it has no
	// batch to lose.)
	t.Run("RealFIFO/in a batch", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := fakeapi.New[*corev1.ConfigMap]()
			gate := make(chan struct{})
			logs := &logBuffer{}
			inf := newInformer(defaults, src, informer.Options[*corev1.ConfigMap]{Indexers: failOnBad(gate), Logger: logs.logger()})
			rec := &recorder{}
			_, err := inf.AddEventHandler(rec)
			require.NoError(t, err)
			running(t, inf)
			synctest.Wait()

			src.Create(cm("slow", "color", "red"))
			synctest.Wait() // the processing loop waits inside the index function
			src.Create(cm("b", "color", "red"))
			src.Create(cm("bad", "bad", "yes"))
			src.Create(cm("c", "color", "red"))
			src.Create(cm("d", "color", "red"))
			synctest.Wait() // all four are queued: the next pop takes them as one batch
			close(gate)
			synctest.Wait()

			assert.ElementsMatch(t, []string{"ns/slow", "ns/b", "ns/c", "ns/d"}, inf.Indexer().ListKeys())
			assert.Equal(t, []string{"add slow", "add b", "add c", "add d"}, rec.summary())
			assert.Contains(t, logs.String(), "key=ns/bad")
			keys, err := inf.Indexer().IndexKeys("color", "red")
			require.NoError(t, err)
			assert.Equal(t, []string{"ns/b", "ns/c", "ns/d", "ns/slow"}, keys)
		})
	})
}
