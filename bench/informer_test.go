package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/bench/internal/heapsample"
	"github.com/kubeinternals/informers/bench/internal/sidebyside"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/trace"
)

// The informer benchmark: an in-process source lists informerBenchObjects ConfigMaps,
// then streams one Modified event for each, to an informer with three handlers that
// count what they receive. Both sides get the identical pre-built objects and events
// through a buffered channel, so the source costs the same. Besides ns/op (one whole
// run) it reports:
//
//	ms/synced        time from Run until HasSynced (checked every 1ms on both sides)
//	ms/delivered     time from Run until all three handlers have seen every add and update
//	MB-heap-peak     the peak of the heap's objects during the run, above the level
//	                 before it, sampled every 2ms: it includes garbage not yet swept, so
//	                 it shows how much memory the run needs between collections
//	MB-live-after    the live heap once every handler is done, after a forced
//	                 collection, above the level before the run: what the cache keeps
//
// Every collection the measurement forces runs with the timer stopped.
const informerBenchObjects = 50_000

type informerWorkload struct {
	list    []*corev1.ConfigMap
	updates []*corev1.ConfigMap
}

func newInformerWorkload(n int) informerWorkload {
	w := informerWorkload{}
	for i := range n {
		c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns" + strconv.Itoa(i%50), Name: "cm-" + strconv.Itoa(i),
			ResourceVersion: strconv.Itoa(i + 1), Labels: map[string]string{"app": "bench"},
		}, Data: map[string]string{"k": "v"}}
		w.list = append(w.list, c)
		u := c.DeepCopy()
		u.ResourceVersion = strconv.Itoa(n + i + 1)
		u.Data["k"] = "v2"
		w.updates = append(w.updates, u)
	}
	return w
}

// counter is one handler: it counts adds and updates and closes done once it has
// seen target of each.
type counter struct {
	target        int64
	adds, updates atomic.Int64
	done          chan struct{}
	closed        atomic.Bool
}

func newCounter(target int) *counter {
	return &counter{target: int64(target), done: make(chan struct{})}
}

func (c *counter) check() {
	if c.adds.Load() >= c.target && c.updates.Load() >= c.target && c.closed.CompareAndSwap(false, true) {
		close(c.done)
	}
}

func (c *counter) add()    { c.adds.Add(1); c.check() }
func (c *counter) update() { c.updates.Add(1); c.check() }

// informerMetrics accumulates over every op, the untimed warm-up op included: the
// averages divide by ops.
type informerMetrics struct {
	ops               int
	synced, delivered time.Duration
	peakMB, liveMB    float64
}

func (m informerMetrics) report(b *testing.B) {
	n := float64(m.ops)
	b.ReportMetric(float64(m.synced.Milliseconds())/n, "ms/synced")
	b.ReportMetric(float64(m.delivered.Milliseconds())/n, "ms/delivered")
	b.ReportMetric(m.peakMB/n, "MB-heap-peak")
	b.ReportMetric(m.liveMB/n, "MB-live-after")
}

func waitSynced(hasSynced func() bool) {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for !hasSynced() {
		<-t.C
	}
}

// informerRun is one op of an informer benchmark, the same steps on both sides: start
// the informer, wait for HasSynced, send every update, wait for every handler to have
// seen every add and update, measure, stop.
type informerRun struct {
	n         int
	run       func(ctx context.Context)
	hasSynced func() bool
	send      func(i int)
	counters  []*counter
}

func (r informerRun) measure(b *testing.B, m *informerMetrics) {
	b.StopTimer()
	heap := heapsample.Start()
	b.StartTimer()
	start := time.Now()
	stop := running(r.run)
	waitSynced(r.hasSynced)
	m.synced += time.Since(start)
	for i := range r.n {
		r.send(i)
	}
	for _, c := range r.counters {
		<-c.done
	}
	m.delivered += time.Since(start)
	m.ops++
	peak, live := heap.Finish(b)
	m.peakMB += peak
	m.liveMB += live
	stop()
}

// BenchmarkInformerSync50kThenUpdate50kTo3Handlers: list 50k ConfigMaps, then 50k
// updates, to 3 counting handlers, both informers on a RealFIFO (client-go's
// informers' queue since 1.33, and our zero value).
//
// Fair: like with like. Each side's source hands over what its real REST path
// would: ours a fresh copy of every item each op (our ListerWatcher copies each
// item out of the decoded page), client-go one list built outside the loop, from
// which its reflector makes the same per-item copies (meta.ExtractListWithAlloc).
// The same events through a buffered channel on both sides.
func BenchmarkInformerSync50kThenUpdate50kTo3Handlers(b *testing.B) {
	benchmarkInformer(b, informerBench{n: informerBenchObjects, handlers: 3, queue: informer.RealFIFOQueue})
}

// BenchmarkInformerDefaultsDeltaFIFOvsRealFIFO: the same workload on our DeltaFIFO
// (the classic pipeline's queue, chosen by name) against client-go's RealFIFO. The
// name is from when DeltaFIFO was our default; both defaults are RealFIFO now, and
// BenchmarkInformerSync50kThenUpdate50kTo3Handlers compares them.
//
// Fair: the same workload; the queues differ, so the row prices the DeltaFIFO's
// per-key merging against RealFIFO's log.
//
// Not in the headline: the two sides run different queue designs.
func BenchmarkInformerDefaultsDeltaFIFOvsRealFIFO(b *testing.B) {
	benchmarkInformer(b, informerBench{n: informerBenchObjects, handlers: 3, queue: informer.DeltaFIFOQueue})
}

// BenchmarkInformerSync50kThenUpdate50kTo3HandlersTraced is the first row with a
// tracer attached to our informer, whose sink only counts events (trace-events/op):
// next to the untraced row, it prices tracing per event.
//
// Fair: client-go has no trace; its side is the same untraced run as in the first row.
//
// Not in the headline: only ours does the extra work of tracing.
func BenchmarkInformerSync50kThenUpdate50kTo3HandlersTraced(b *testing.B) {
	benchmarkInformer(b, informerBench{n: informerBenchObjects, handlers: 3, queue: informer.RealFIFOQueue, traced: true})
}

// BenchmarkInformerFanOut: 10,000 ConfigMaps listed, then 10,000 updates, delivered
// to 1, 10 or 50 counting handlers: the cost of each extra handler (its listener,
// its buffer, its goroutines).
//
// Fair: as BenchmarkInformerSync50kThenUpdate50kTo3Handlers, with fewer objects and
// more handlers. [client-go: BenchmarkListener]
func BenchmarkInformerFanOut(b *testing.B) {
	for _, handlers := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("handlers=%d", handlers), func(b *testing.B) {
			benchmarkInformer(b, informerBench{n: 10_000, handlers: handlers, queue: informer.RealFIFOQueue})
		})
	}
}

// informerBench configures benchmarkInformer: n objects listed then n updates, to
// handlers counting handlers, our informer on queue (client-go's is always its
// RealFIFO), ours traced or not.
type informerBench struct {
	n, handlers int
	queue       informer.QueueKind
	traced      bool
}

func benchmarkInformer(b *testing.B, cfg informerBench) {
	queue, traced := cfg.queue, cfg.traced
	w := newInformerWorkload(cfg.n)
	// client-go's list, built once: its reflector copies the items out of it.
	cgList := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(cfg.n)}}
	cgList.Items = make([]corev1.ConfigMap, len(w.list))
	for i, c := range w.list {
		cgList.Items[i] = *c
	}
	sidebyside.Pair(b, func(b *testing.B) {
		var m informerMetrics
		var traceEvents atomic.Int64
		var tracer *trace.Tracer
		if traced {
			tracer = trace.New(func(trace.Event) { traceEvents.Add(1) })
		}
		sidebyside.Loop(b, func() {
			events := make(chan reflector.Event[*corev1.ConfigMap], 1024)
			opts := namespaceIndexed[*corev1.ConfigMap](queue)
			opts.Tracer = tracer
			inf := informer.NewSharedIndexInformer(oursSource(func() ([]*corev1.ConfigMap, string) { return w.list, strconv.Itoa(cfg.n) }, events), opts)
			counters := make([]*counter, cfg.handlers)
			for i := range counters {
				c := newCounter(cfg.n)
				counters[i] = c
				if _, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
					AddFunc:    func(*corev1.ConfigMap, bool) { c.add() },
					UpdateFunc: func(_, _ *corev1.ConfigMap) { c.update() },
				}); err != nil {
					b.Fatal(err)
				}
			}
			informerRun{
				n:         cfg.n,
				run:       inf.Run,
				hasSynced: inf.HasSynced,
				send: func(i int) {
					events <- reflector.Event[*corev1.ConfigMap]{Type: watch.Modified, Object: w.updates[i]}
				},
				counters: counters,
			}.measure(b, &m)
		})
		m.report(b)
		if traced {
			b.ReportMetric(float64(traceEvents.Load())/float64(m.ops), "trace-events/op")
		}
	}, func(b *testing.B) {
		var m informerMetrics
		sidebyside.Loop(b, func() {
			events := make(chan watch.Event, 1024)
			inf := cache.NewSharedIndexInformer(clientGoSource(func() runtime.Object { return cgList }, events), &corev1.ConfigMap{}, 0, clientGoNamespaceIndexed)
			counters := make([]*counter, cfg.handlers)
			for i := range counters {
				c := newCounter(cfg.n)
				counters[i] = c
				if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
					AddFunc:    func(any) { c.add() },
					UpdateFunc: func(_, _ any) { c.update() },
				}); err != nil {
					b.Fatal(err)
				}
			}
			informerRun{
				n:         cfg.n,
				run:       inf.RunWithContext,
				hasSynced: inf.HasSynced,
				send:      func(i int) { events <- watch.Event{Type: watch.Modified, Object: w.updates[i]} },
				counters:  counters,
			}.measure(b, &m)
		})
		m.report(b)
	})
}
