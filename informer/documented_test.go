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

// A watch DELETED for a key the cache never held reaches RealFIFO's handlers as an
// OnDelete without a tombstone — RealFIFO never reads the cache, as in client-go 1.37 —
// while DeltaFIFO drops it (nothing queued for the key, nothing known: no news).
func TestADeleteOfAKeyTheCacheNeverHeld(t *testing.T) {
	want := map[informer.QueueKind][]string{
		informer.RealFIFOQueue:  {"delete ghost"},
		informer.DeltaFIFOQueue: nil,
	}
	for _, q := range pipelines {
		t.Run(q.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				inf := newInformer(q, src, informer.Options[*corev1.ConfigMap]{})
				rec := &recorder{}
				_, err := inf.AddEventHandler(rec)
				require.NoError(t, err)
				running(t, inf)
				synctest.Wait()
				src.Delete(cm("ghost")) // never created: only its DELETED event exists
				synctest.Wait()
				assert.Equal(t, want[q.queue], rec.summary())
				assert.Empty(t, inf.Indexer().ListKeys())
			})
		})
	}
}

// An initial-list add whose handler panics still counts as handled: the registration
// syncs, without that object handled. (client-go, told not to crash, never counts it,
// so that registration never syncs.)
func TestAPanickedInitialAddStillCountsTowardsTheRegistrationsSync(t *testing.T) {
	for _, q := range pipelines {
		t.Run(q.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				src.Create(cm("bad"))
				src.Create(cm("good"))
				inf := newInformer(q, src, informer.Options[*corev1.ConfigMap]{Logger: (&logBuffer{}).logger()})
				handled := &recorder{}
				reg, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
					AddFunc: func(obj *corev1.ConfigMap, initial bool) {
						if obj.Name == "bad" {
							panic("boom")
						}
						handled.OnAdd(obj, initial)
					},
				})
				require.NoError(t, err)
				running(t, inf)
				synctest.Wait()
				assert.True(t, reg.HasSynced())
				assert.Equal(t, []string{"add good"}, handled.summary())
			})
		})
	}
}
