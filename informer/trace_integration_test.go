package informer_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/trace"
	"github.com/kubeinternals/informers/workqueue"
)

// stageKind is one step of a journey.
type stageKind struct {
	stage trace.Stage
	kind  trace.Kind
}

// journeyStages is what one change to a ConfigMap must pass, in this order, on its
// way from the API server to a worker, through the given queue.
//
// The handler's return is not in the list: once the handler has Added the key, a
// waiting worker may Get it (and even reconcile it) before the handler's own
// goroutine records that it returned, so the two are not ordered. The test checks
// the return separately: after the Add (handlerReturnedAfterAdd).
func journeyStages(queue trace.Stage) []stageKind {
	return []stageKind{
		{trace.Reflector, trace.WatchEvent},
		{queue, trace.Queued},
		{queue, trace.Popped},
		{trace.Informer, trace.Applied},
		{trace.Informer, trace.FannedOut},
		{trace.Listener, trace.Buffered},
		{trace.Listener, trace.HandlerCalled},
		{trace.Workqueue, trace.Added},
		{trace.Workqueue, trace.Got},
		{trace.Controller, trace.Reconciled},
		{trace.Workqueue, trace.Done},
	}
}

// handlerReturnedAfterAdd reports whether the journey records the handler's return
// after the workqueue's Add.
func handlerReturnedAfterAdd(journey []trace.Event) bool {
	added := false
	for _, e := range journey {
		switch {
		case e.Stage == trace.Workqueue && e.Kind == trace.Added:
			added = true
		case added && e.Stage == trace.Listener && e.Kind == trace.HandlerReturned:
			return true
		}
	}
	return false
}

// TestIntegrationEveryChangeJourneysThroughEveryStageInOrder runs a one-resource
// controller (informer → handler → workqueue → worker) against the real API server,
// with one tracer on the Factory and the workqueue, and checks the journey of a
// ConfigMap's create, update and delete — through the Factory's zero options
// (RealFIFO, watch-list) and through the classic pipeline chosen by name.
func TestIntegrationEveryChangeJourneysThroughEveryStageInOrder(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	for _, p := range pipelines {
		t.Run(p.name, func(t *testing.T) { journeyThroughEveryStage(t, env, p) })
	}
}

func journeyThroughEveryStage(t *testing.T, env *testenv.Env, p pipeline) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts := informer.FactoryOptions{}
	wantQueue, wantList := trace.RealFIFO, "watch-list"
	if p != defaults {
		opts.Queue, opts.InitialList = p.queue, p.list
		wantQueue, wantList = trace.DeltaFIFO, "list"
	}
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	require.NoError(t, err)

	var rec trace.Recorder
	tr := trace.New(rec.Record)
	opts.Scheme, opts.Tracer = scheme, tr
	f := informer.NewFactory(env.Config, opts)
	defer f.Shutdown()
	inf, err := informer.For[*corev1.ConfigMap](f, configMaps)
	require.NoError(t, err)
	queue := workqueue.NewQueue[string](workqueue.Options{Name: "configmaps", Tracer: tr})
	enqueue := func(obj *corev1.ConfigMap) {
		if key, err := indexer.MetaNamespaceKeyFunc(obj); err == nil {
			queue.Add(key)
		}
	}
	_, err = inf.AddEventHandlerWithOptions(informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(obj *corev1.ConfigMap, _ bool) { enqueue(obj) },
		UpdateFunc: func(_, obj *corev1.ConfigMap) { enqueue(obj) },
		DeleteFunc: func(obj informer.DeletedObject[*corev1.ConfigMap]) { enqueue(obj.OptionalObj) },
	}, informer.HandlerOptions{Name: "enqueue"})
	require.NoError(t, err)
	workerDone := make(chan struct{})
	// Goroutine owned by this test: the worker; it exits when the queue shuts down below.
	go func() {
		defer close(workerDone)
		for {
			key, shutdown := queue.Get()
			if shutdown {
				return
			}
			start := time.Now()
			_, _, err := inf.Indexer().GetByKey(key) // the "sync": read the cache
			tr.Reconciled("configmaps", key, time.Since(start), err)
			queue.Done(key)
		}
	}()
	defer func() { queue.ShutDown(); <-workerDone }()
	f.Start(ctx)
	require.NoError(t, informer.WaitForCacheSync(ctx, inf))
	lists := trace.Filter(rec.Events(), func(e trace.Event) bool { return e.Kind == trace.ListStarted })
	require.NotEmpty(t, lists)
	require.Equal(t, wantList, lists[0].Type, "how the cache was filled")

	core := client(t, env.Config, corev1.SchemeGroupVersion)
	const key = "default/journey"
	obj := defaultCM("journey")
	for _, change := range []struct{ name, watchType string }{
		{"create", "ADDED"}, {"update", "MODIFIED"}, {"delete", "DELETED"},
	} {
		t.Run(change.name, func(t *testing.T) {
			rec.Reset()
			switch change.name {
			case "create":
				post(t, ctx, core, "default", "configmaps", obj)
			case "update":
				require.NoError(t, core.Patch("application/merge-patch+json").Namespace("default").Resource("configmaps").
					Name("journey").Body([]byte(`{"data":{"step":"2"}}`)).Do(ctx).Error())
			case "delete":
				require.NoError(t, core.Delete().Namespace("default").Resource("configmaps").Name("journey").Do(ctx).Error())
			}
			eventually(t, ctx, "the worker is done with "+key, func() bool {
				return len(trace.Filter(rec.Events(), func(e trace.Event) bool {
					return e.Kind == trace.Done && e.Key == key
				})) > 0
			})
			journey := trace.Journey(rec.Events(), "configmaps", key)
			var timeline strings.Builder
			require.NoError(t, trace.WriteTimeline(&timeline, journey))
			t.Logf("journey of the %s:\n%s", change.name, timeline.String())

			stages := journeyStages(wantQueue)
			next := 0
			var rv string
			for _, e := range journey {
				if next < len(stages) && e.Stage == stages[next].stage && e.Kind == stages[next].kind {
					switch e.Kind {
					case trace.WatchEvent:
						require.Equal(t, change.watchType, e.Type)
						rv = e.ResourceVersion
					case trace.Applied:
						require.Equal(t, rv, e.ResourceVersion, "the indexer got the watch event's version")
					}
					next++
				}
			}
			require.Equal(t, len(stages), next, "the journey stopped before %s %s", stages[min(next, len(stages)-1)].stage, stages[min(next, len(stages)-1)].kind)
			require.True(t, handlerReturnedAfterAdd(journey), "the handler returned after it Added the key")
		})
	}
}
