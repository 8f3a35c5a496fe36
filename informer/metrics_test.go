package informer_test

import (
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
	"github.com/kubeinternals/informers/internal/testrig/testmetrics"
	"github.com/kubeinternals/informers/internal/testrig/testmetrics/informermetrics"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/trace"
)

// metricsRecorder records every value of every metric under "metric{labels}".
type metricsRecorder = informermetrics.Recorder

// One provider in Options gives the informer's, its reflector's and its handlers'
// metrics, on both pipelines: the queue fills and drains, the cache's resource
// version follows the server, a slow handler's backlog and high-water mark grow, and
// a panicking one is counted.
func TestInformerMetrics(t *testing.T) {
	for _, p := range pipelines {
		t.Run(p.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				src.Create(cm("a"))
				src.Create(cm("b"))
				rec := &metricsRecorder{}
				inf := newInformer(p, src, informer.Options[*corev1.ConfigMap]{Name: "cms", MetricsProvider: rec, Logger: logBufferLogger()})
				release := make(chan struct{})
				_, err := inf.AddEventHandlerWithOptions(informer.HandlerFuncs[*corev1.ConfigMap]{
					UpdateFunc: func(_, _ *corev1.ConfigMap) { <-release },
				}, informer.HandlerOptions{Name: "slow"})
				require.NoError(t, err)
				_, err = inf.AddEventHandlerWithOptions(informer.HandlerFuncs[*corev1.ConfigMap]{
					AddFunc: func(obj *corev1.ConfigMap, _ bool) {
						if obj.Name == "boom" {
							panic("boom")
						}
					},
				}, informer.HandlerOptions{Name: "fragile"})
				require.NoError(t, err)
				running(t, inf)
				synctest.Wait()

				for i := range 5 {
					src.Update(cm("a", "n", strconv.Itoa(i)))
				}
				src.Create(cm("boom"))
				synctest.Wait()
				assert.GreaterOrEqual(t, rec.Last("high_water{cms,slow}"), 5.0,
					"the slow handler holds the first update; the other four and boom's add wait (the first too, if it was not popped yet): %s", rec)
				assert.Equal(t, rec.Last("high_water{cms,slow}"), slicesMax(rec.Values("backlog{cms,slow}")), "the high-water mark is the largest backlog")
				close(release)
				synctest.Wait()

				assert.Equal(t, 0.0, rec.Last("backlog{cms,slow}"), "drained")
				assert.Equal(t, 0.0, rec.Last("queued{cms}"), "the queue drained")
				assert.Greater(t, slicesMax(rec.Values("queued{cms}")), 0.0, "and had items")
				assert.NotEmpty(t, rec.Values("processing{cms}"))
				rv, _ := strconv.ParseFloat(src.ResourceVersion(), 64)
				assert.Equal(t, rv, rec.Last("store_rv{cms}"), "the cache is at the server's resource version")
				assert.Equal(t, []float64{1}, rec.Values("panics{cms,fragile}"))
				assert.Empty(t, rec.Values("panics{cms,slow}"))
				assert.Len(t, rec.Values("handler_duration{cms,fragile}"), 8, "a and b's adds, five updates, boom's add (the call that panicked too)")
				assert.Equal(t, []float64{1}, rec.Values("lists{cms}"), "the reflector's metrics come from the same provider")
				assert.Len(t, rec.Values("watch_events{cms}{MODIFIED}"), 5)
				assert.Equal(t, 1.0, rec.Last("watch_open{cms}"), "the watch is open")
			})
		})
	}
}

func slicesMax(v []float64) float64 {
	m := -1.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// A provider that records without allocating adds no allocation per watch event on
// the informer's whole path: reflector, queue, cache, handler.
func TestInformerMetricsAddNoAllocationPerEvent(t *testing.T) {
	perEvent := func(p informer.MetricsProvider) float64 {
		src := fakeapi.New[*corev1.ConfigMap]()
		obj := src.Create(cm("a"))
		inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](src, informer.Options[*corev1.ConfigMap]{MetricsProvider: p})
		done := make(chan struct{}, 1)
		_, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{UpdateFunc: func(_, _ *corev1.ConfigMap) { done <- struct{}{} }})
		require.NoError(t, err)
		_, stop := running(t, inf)
		defer stop()
		for !inf.HasSynced() {
			time.Sleep(time.Millisecond)
		}
		update := func() {
			obj = src.Update(obj)
			<-done
		}
		for range 100 {
			update()
		}
		return testing.AllocsPerRun(500, update)
	}
	without := perEvent(nil)
	with := perEvent(allocFree{})
	assert.InDelta(t, without, with, 0.5, "allocations per event without metrics %v, with %v", without, with)
}

// allocFree's metrics drop their values without allocating.
type allocFree struct{}

type drop struct{}

func (drop) Inc()            {}
func (drop) Set(float64)     {}
func (drop) Observe(float64) {}

type dropLabeled struct{}

func (dropLabeled) Inc(string) {}

func (allocFree) NewListsMetric(string) reflector.CounterMetric               { return drop{} }
func (allocFree) NewListDurationMetric(string) reflector.SummaryMetric        { return drop{} }
func (allocFree) NewItemsInListMetric(string) reflector.SummaryMetric         { return drop{} }
func (allocFree) NewWatchesMetric(string) reflector.CounterMetric             { return drop{} }
func (allocFree) NewShortWatchesMetric(string) reflector.CounterMetric        { return drop{} }
func (allocFree) NewWatchDurationMetric(string) reflector.SummaryMetric       { return drop{} }
func (allocFree) NewItemsInWatchMetric(string) reflector.SummaryMetric        { return drop{} }
func (allocFree) NewLastResourceVersionMetric(string) reflector.GaugeMetric   { return drop{} }
func (allocFree) NewRelistsMetric(string) reflector.LabeledCounterMetric      { return dropLabeled{} }
func (allocFree) NewWatchEventsMetric(string) reflector.LabeledCounterMetric  { return dropLabeled{} }
func (allocFree) NewLastEventTimeMetric(string) reflector.GaugeMetric         { return drop{} }
func (allocFree) NewWatchOpenMetric(string) reflector.GaugeMetric             { return drop{} }
func (allocFree) NewQueuedItemsMetric(string) informer.GaugeMetric            { return drop{} }
func (allocFree) NewProcessingLatencyMetric(string) informer.HistogramMetric  { return drop{} }
func (allocFree) NewStoreResourceVersionMetric(string) informer.GaugeMetric   { return drop{} }
func (allocFree) NewShardDroppedMetric(string) informer.CounterMetric         { return drop{} }
func (allocFree) NewShardClientFilteringMetric(string) informer.GaugeMetric   { return drop{} }
func (allocFree) NewHandlerBacklogMetric(string, string) informer.GaugeMetric { return drop{} }
func (allocFree) NewHandlerHighWaterMetric(string, string) informer.GaugeMetric {
	return drop{}
}
func (allocFree) NewHandlerDurationMetric(string, string) informer.HistogramMetric {
	return drop{}
}
func (allocFree) NewHandlerPanicsMetric(string, string) informer.CounterMetric { return drop{} }
func (allocFree) DeleteHandlerMetrics(string, string)                          {}

// Removing a handler tells the provider to delete that handler's series, once; the
// other handlers' series stay.
func TestRemovingAHandlerDeletesItsSeries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		src.Create(cm("a"))
		rec := &metricsRecorder{}
		inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](src, informer.Options[*corev1.ConfigMap]{Name: "cms", MetricsProvider: rec, Logger: logBufferLogger()})
		gone, err := inf.AddEventHandlerWithOptions(&recorder{}, informer.HandlerOptions{Name: "gone"})
		require.NoError(t, err)
		_, err = inf.AddEventHandlerWithOptions(&recorder{}, informer.HandlerOptions{Name: "kept"})
		require.NoError(t, err)
		running(t, inf)
		synctest.Wait()
		require.NotEmpty(t, rec.Values("handler_duration{cms,gone}"), "the handler had series: %s", rec)

		inf.RemoveEventHandler(gone)
		inf.RemoveEventHandler(gone) // a no-op
		synctest.Wait()
		assert.Equal(t, []float64{1}, rec.Values("deleted{cms,gone}"), "deleted once: %s", rec)
		assert.Empty(t, rec.Values("deleted{cms,kept}"))
	})
}

// An unnamed handler is "<informer> handler <n>" — n counting the informer's
// registrations, never reused after a removal — in its metrics, its log lines and its
// trace events alike; the informer is "informer" when it has no name.
func TestAnUnnamedHandlerHasOneNameInMetricsLogsAndTrace(t *testing.T) {
	for _, c := range []struct {
		informer, metricsName, prefix string
	}{
		{"cms", "cms", "cms handler "},
		{"", "*v1.ConfigMap", "informer handler "},
	} {
		t.Run("informer named "+c.metricsName, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				src.Create(cm("boom"))
				rec := &metricsRecorder{}
				var logs logBuffer
				events := &trace.Recorder{}
				inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](src, informer.Options[*corev1.ConfigMap]{
					Name: c.informer, MetricsProvider: rec, Logger: logs.logger(), Tracer: trace.New(events.Record),
				})
				panicking := informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(*corev1.ConfigMap, bool) { panic("boom") }}
				first, err := inf.AddEventHandler(panicking)
				require.NoError(t, err)
				_, err = inf.AddEventHandler(panicking)
				require.NoError(t, err)
				running(t, inf)
				synctest.Wait()
				inf.RemoveEventHandler(first)
				_, err = inf.AddEventHandler(panicking) // after the informer started: the replay panics too
				require.NoError(t, err)
				synctest.Wait()

				for _, n := range []string{"1", "2", "3"} {
					name := c.prefix + n
					assert.Equal(t, []float64{1}, rec.Values("panics{"+c.metricsName+","+name+"}"), "metrics: %s", rec)
					assert.Contains(t, logs.String(), `handler="`+name+`"`, "logs")
					assert.True(t, slices.ContainsFunc(events.Events(), func(e trace.Event) bool {
						return e.Stage == trace.Listener && e.Kind == trace.PanicRecovered && e.Source == name
					}), "trace: %s", name)
				}
				assert.Equal(t, []float64{1}, rec.Values("deleted{"+c.metricsName+","+c.prefix+"1}"))
			})
		})
	}
}

// creationCounter is a metricsRecorder that also counts, per informer name, the
// informers that created their metrics.
type creationCounter struct {
	metricsRecorder
	mu      sync.Mutex
	created map[string]int // guarded by mu
}

func (c *creationCounter) NewQueuedItemsMetric(n string) informer.GaugeMetric {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.created == nil {
		c.created = map[string]int{}
	}
	c.created[n]++
	return c.metricsRecorder.NewQueuedItemsMetric(n)
}

// Two informers of one Factory whose metrics would have one name — one resource as
// two Go types, or in two namespaces — are not both published: the first keeps the
// name, a later one gets no metrics and an error in the log, as client-go's
// InformerName.WithResource does with a duplicate registration.
func TestAFactoryPublishesTheMetricsOfOneInformerPerName(t *testing.T) {
	var logs logBuffer
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	require.NoError(t, err)
	p := &creationCounter{}
	f := informer.NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, informer.FactoryOptions{
		Scheme: scheme, Logger: logs.logger(), MetricsProvider: p,
	})
	cms := informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("configmaps")}
	_, err = informer.For[*corev1.ConfigMap](f, cms)
	require.NoError(t, err)
	_, err = informer.For[*corev1.ConfigMap](f, cms) // the same informer, shared: no second registration
	require.NoError(t, err)
	assert.Empty(t, logs.String())

	_, err = informer.For[*metav1.PartialObjectMetadata](f, cms)
	require.NoError(t, err, "the informer itself is built")
	_, err = informer.For[*corev1.ConfigMap](f, informer.Resource{GVR: cms.GVR, Namespace: "web"})
	require.NoError(t, err)
	_, err = informer.For[*corev1.Secret](f, informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("secrets")})
	require.NoError(t, err)

	p.mu.Lock()
	assert.Equal(t, map[string]int{"configmaps": 1, "secrets": 1}, p.created)
	p.mu.Unlock()
	assert.Equal(t, 2, strings.Count(logs.String(), `level=ERROR msg="duplicate informer name: this informer's metrics are not published"`), logs.String())
	assert.Contains(t, logs.String(), `name=configmaps resource="configmaps in namespace \"web\""`)
}

// slowGauge records a non-zero queue length only after yielding until a zero has been
// recorded (or many times over): it gives a concurrent Pop every chance to record its
// length first. Set under the queue's lock, the Pop waits for it; set after the lock
// was released, the older length lands last.
type slowGauge struct {
	m       testmetrics.Metric
	sawZero atomic.Bool
}

func (g *slowGauge) Set(v float64) {
	if v == 0 {
		g.sawZero.Store(true)
	} else {
		g.sawZero.Store(false)
		for i := 0; i < 10000 && !g.sawZero.Load(); i++ {
			runtime.Gosched()
		}
	}
	g.m.Set(v)
}

type slowQueuedItems struct {
	metricsRecorder
	gauge *slowGauge
}

func (p *slowQueuedItems) NewQueuedItemsMetric(n string) informer.GaugeMetric {
	p.gauge = &slowGauge{m: p.M("queued", n)}
	return p.gauge
}

// The queued-items gauge reads 0 whenever the queue is empty, on both pipelines: the
// length is recorded under the queue's lock, so a write's length cannot land after
// the Pop that emptied the queue.
func TestTheQueuedItemsGaugeReadsZeroOnceTheQueueIsEmpty(t *testing.T) {
	for _, p := range pipelines {
		t.Run(p.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				obj := src.Create(cm("a"))
				rec := &slowQueuedItems{}
				inf := newInformer(p, src, informer.Options[*corev1.ConfigMap]{Name: "cms", MetricsProvider: rec, Logger: logBufferLogger()})
				running(t, inf)
				synctest.Wait()
				for i := range 20 {
					obj = src.Update(obj)
					synctest.Wait()
					require.Equal(t, 0.0, rec.Last("queued{cms}"), "after update %d, with nothing queued: %v", i, rec.Values("queued{cms}"))
				}
			})
		})
	}
}

// Handler names are unique per informer: a second handler under a name in use is
// refused with ErrDuplicateHandlerName, so removing a handler deletes only its own
// series. The name may be used again after the removal; an unnamed handler skips a
// number whose name a handler took; another informer may use the same name.
func TestAHandlerNameInUseIsRefusedSoNoTwoHandlersShareASeries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		src.Create(cm("a"))
		rec := &metricsRecorder{}
		inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](src, informer.Options[*corev1.ConfigMap]{Name: "cms", MetricsProvider: rec, Logger: logBufferLogger()})
		first, err := inf.AddEventHandlerWithOptions(&recorder{}, informer.HandlerOptions{Name: "same"})
		require.NoError(t, err)
		_, err = inf.AddEventHandlerWithOptions(&recorder{}, informer.HandlerOptions{Name: "same"})
		require.ErrorIs(t, err, informer.ErrDuplicateHandlerName)
		assert.ErrorContains(t, err, `"same"`)
		taken, err := inf.AddEventHandlerWithOptions(&recorder{}, informer.HandlerOptions{Name: "cms handler 3"})
		require.NoError(t, err)
		unnamed, err := inf.AddEventHandler(&recorder{})
		require.NoError(t, err)
		running(t, inf)
		synctest.Wait()
		assert.NotEmpty(t, rec.Values("handler_duration{cms,cms handler 4}"), "the unnamed handler skipped the taken name: %s", rec)
		assert.Len(t, rec.Values("handler_duration{cms,same}"), 1, "one handler, one series: %s", rec)

		inf.RemoveEventHandler(first)
		synctest.Wait()
		again, err := inf.AddEventHandlerWithOptions(&recorder{}, informer.HandlerOptions{Name: "same"})
		require.NoError(t, err, "a removed handler's name is free again")
		other := informer.NewSharedIndexInformer[*corev1.ConfigMap](fakeapi.New[*corev1.ConfigMap](), informer.Options[*corev1.ConfigMap]{Name: "other", Logger: logBufferLogger()})
		_, err = other.AddEventHandlerWithOptions(&recorder{}, informer.HandlerOptions{Name: "same"})
		require.NoError(t, err, "names are per informer")
		inf.RemoveEventHandler(taken)
		inf.RemoveEventHandler(unnamed)
		inf.RemoveEventHandler(again)
	})
}

// Two informers of one Factory for resources of one name in two groups — events
// (core) and events.events.k8s.io — both publish their metrics, under names that
// carry the group when it is not the core group.
func TestAFactoryNamesMetricsByResourceAndGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		scheme, err := listwatch.NewScheme(corev1.AddToScheme, eventsv1.AddToScheme)
		require.NoError(t, err)
		p := &creationCounter{}
		f := informer.NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, informer.FactoryOptions{
			Scheme: scheme, Logger: logs.logger(), MetricsProvider: p,
		})
		_, err = informer.For[*corev1.Event](f, informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("events")})
		require.NoError(t, err)
		_, err = informer.For[*eventsv1.Event](f, informer.Resource{GVR: eventsv1.SchemeGroupVersion.WithResource("events")})
		require.NoError(t, err)
		p.mu.Lock()
		assert.Equal(t, map[string]int{"events": 1, "events.events.k8s.io": 1}, p.created)
		p.mu.Unlock()
		assert.Empty(t, logs.String(), "no duplicate")
	})
}
