package informer_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/trace"
)

// The zero Options are client-go 1.37's informer: the state arrives as a watch-list
// (no LIST request at all), flows through a RealFIFO that queues bookmarks, and a
// watch DELETED for a key the cache never held still reaches the handlers.
func TestTheZeroOptionsGiveClientGosPipeline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		src.Create(cm("a"))
		var rec trace.Recorder
		inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](src, informer.Options[*corev1.ConfigMap]{
			Name: "configmaps", Tracer: trace.New(rec.Record),
		})
		handler := &recorder{}
		_, err := inf.AddEventHandler(handler)
		require.NoError(t, err)
		running(t, inf)
		synctest.Wait()
		require.True(t, inf.HasSynced())

		assert.Empty(t, src.ListCalls(), "no LIST: the state came as a stream")
		watches := src.WatchCalls()
		require.NotEmpty(t, watches)
		require.NotNil(t, watches[0].SendInitialEvents, "the first request is a watch-list")
		assert.True(t, *watches[0].SendInitialEvents)

		stages := map[trace.Stage]int{}
		for _, e := range rec.Events() {
			stages[e.Stage]++
		}
		assert.Positive(t, stages[trace.RealFIFO], "the queue is a RealFIFO")
		assert.Zero(t, stages[trace.DeltaFIFO], "and not a DeltaFIFO")

		// A delete of a key the cache never held: RealFIFO queues it, DeltaFIFO
		// would drop it.
		ghost := cm("ghost")
		ghost.ResourceVersion = "1"
		src.Delete(ghost)
		synctest.Wait()
		assert.Contains(t, handler.summary(), "delete ghost")
	})
}

// A ListerWatcher that declares it cannot serve a watch-list (as client-go's fake
// clientsets do) is listed instead, even with the zero Options.
func TestAListerWatcherWithoutWatchListIsListed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		src.Create(cm("a"))
		src.SetWatchListUnsupported(true)
		inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](src, informer.Options[*corev1.ConfigMap]{})
		running(t, inf)
		synctest.Wait()
		require.True(t, inf.HasSynced())
		assert.Len(t, src.ListCalls(), 1)
		for _, w := range src.WatchCalls() {
			assert.Nil(t, w.SendInitialEvents, "no watch-list was tried")
		}
	})
}

// An unknown Queue or InitialList is not guessed at: Run logs it and
// WaitForCacheSync returns it at once.
func TestUnknownPipelineOptionsAreAClearError(t *testing.T) {
	for name, opts := range map[string]informer.Options[*corev1.ConfigMap]{
		"an unknown Queue":       {Queue: informer.DeltaFIFOQueue + 1},
		"an unknown InitialList": {InitialList: reflector.PagedList + 1},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				logs := &logBuffer{}
				opts.Logger = logs.logger()
				inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](fakeapi.New[*corev1.ConfigMap](), opts)
				running(t, inf)
				err := informer.WaitForCacheSync(context.Background(), inf)
				require.Error(t, err)
				assert.True(t, errors.Is(err, reflector.ErrInvalidOptions), "got %v", err)
				synctest.Wait() // Run has returned
				assert.Contains(t, logs.String(), "informer not run")
			})
		})
	}
}
