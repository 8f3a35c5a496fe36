package bench

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/indexer"
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
//	ms/synced     time from Run until HasSynced (checked every 1ms on both sides)
//	ms/delivered  time from Run until all three handlers have seen every add and update
//	MB-peak-heap  peak live heap during the run, above the level before it
const informerBenchObjects = 50_000

type informerWorkload struct {
	list    []*corev1.ConfigMap
	updates []*corev1.ConfigMap
}

func newInformerWorkload() informerWorkload {
	w := informerWorkload{}
	for i := range informerBenchObjects {
		c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns" + strconv.Itoa(i%50), Name: "cm-" + strconv.Itoa(i),
			ResourceVersion: strconv.Itoa(i + 1), Labels: map[string]string{"app": "bench"},
		}, Data: map[string]string{"k": "v"}}
		w.list = append(w.list, c)
		u := c.DeepCopy()
		u.ResourceVersion = strconv.Itoa(informerBenchObjects + i + 1)
		u.Data["k"] = "v2"
		w.updates = append(w.updates, u)
	}
	return w
}

// counter is one handler: it counts adds and updates and closes done at the target.
type counter struct {
	adds, updates atomic.Int64
	done          chan struct{}
	closed        atomic.Bool
}

func (c *counter) check() {
	if c.adds.Load() >= informerBenchObjects && c.updates.Load() >= informerBenchObjects && c.closed.CompareAndSwap(false, true) {
		close(c.done)
	}
}

func (c *counter) add()    { c.adds.Add(1); c.check() }
func (c *counter) update() { c.updates.Add(1); c.check() }

type informerMetrics struct {
	synced, delivered time.Duration
	peakMB            float64
}

func (m informerMetrics) report(b *testing.B) {
	n := float64(b.N)
	b.ReportMetric(float64(m.synced.Milliseconds())/n, "ms/synced")
	b.ReportMetric(float64(m.delivered.Milliseconds())/n, "ms/delivered")
	b.ReportMetric(m.peakMB/n, "MB-peak-heap")
}

func waitSynced(hasSynced func() bool) {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for !hasSynced() {
		<-t.C
	}
}

// BenchmarkInformerSync50kThenUpdate50kTo3Handlers compares our default (DeltaFIFO)
// with client-go's default (RealFIFO); ...RealFIFO below compares like with like.
func BenchmarkInformerSync50kThenUpdate50kTo3Handlers(b *testing.B) {
	benchmarkInformer(b, informer.DeltaFIFOQueue, false)
}

func BenchmarkInformerSync50kThenUpdate50kTo3HandlersRealFIFO(b *testing.B) {
	benchmarkInformer(b, informer.RealFIFOQueue, false)
}

// BenchmarkInformerSync50kThenUpdate50kTo3HandlersTraced is the first row with a
// tracer attached to our informer, whose sink only counts events (trace-events/op):
// next to the untraced row, it prices tracing per event. client-go has no trace; its
// side is the same untraced run as in the first row.
func BenchmarkInformerSync50kThenUpdate50kTo3HandlersTraced(b *testing.B) {
	benchmarkInformer(b, informer.DeltaFIFOQueue, true)
}

func benchmarkInformer(b *testing.B, queue informer.QueueKind, traced bool) {
	w := newInformerWorkload()
	b.Run("ours", func(b *testing.B) {
		b.ReportAllocs()
		var m informerMetrics
		var traceEvents atomic.Int64
		var tracer *trace.Tracer
		if traced {
			tracer = trace.New(func(trace.Event) { traceEvents.Add(1) })
		}
		for b.Loop() {
			events := make(chan reflector.Event[*corev1.ConfigMap], 1024)
			lw := reflector.ListWatch[*corev1.ConfigMap]{
				ListFunc: func(context.Context, metav1.ListOptions) (reflector.ListResult[*corev1.ConfigMap], error) {
					return reflector.ListResult[*corev1.ConfigMap]{Items: append([]*corev1.ConfigMap(nil), w.list...), ResourceVersion: strconv.Itoa(informerBenchObjects)}, nil
				},
				WatchFunc: func(context.Context, metav1.ListOptions) (reflector.Watch[*corev1.ConfigMap], error) {
					return chanWatch[*corev1.ConfigMap]{ch: events}, nil
				},
			}
			inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](lw, informer.Options[*corev1.ConfigMap]{
				Indexers: indexer.Indexers[*corev1.ConfigMap]{indexer.NamespaceIndex: indexer.MetaNamespaceIndexFunc[*corev1.ConfigMap]},
				Queue:    queue,
				Tracer:   tracer,
			})
			counters := make([]*counter, 3)
			for i := range counters {
				c := &counter{done: make(chan struct{})}
				counters[i] = c
				if _, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
					AddFunc:    func(*corev1.ConfigMap, bool) { c.add() },
					UpdateFunc: func(_, _ *corev1.ConfigMap) { c.update() },
				}); err != nil {
					b.Fatal(err)
				}
			}
			heap := startHeapSampler()
			ctx, cancel := context.WithCancel(context.Background())
			start := time.Now()
			done := make(chan struct{})
			go func() { defer close(done); inf.Run(ctx) }()
			waitSynced(inf.HasSynced)
			m.synced += time.Since(start)
			for _, u := range w.updates {
				events <- reflector.Event[*corev1.ConfigMap]{Type: watch.Modified, Object: u}
			}
			for _, c := range counters {
				<-c.done
			}
			m.delivered += time.Since(start)
			m.peakMB += heap.Stop()
			cancel()
			<-done
		}
		m.report(b)
		if traced {
			b.ReportMetric(float64(traceEvents.Load())/float64(b.N), "trace-events/op")
		}
	})
	b.Run("client-go", func(b *testing.B) {
		b.ReportAllocs()
		var m informerMetrics
		for b.Loop() {
			events := make(chan watch.Event, 1024)
			lw := &cache.ListWatch{
				ListFunc: func(metav1.ListOptions) (runtime.Object, error) {
					list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(informerBenchObjects)}}
					list.Items = make([]corev1.ConfigMap, len(w.list))
					for i, c := range w.list {
						list.Items[i] = *c
					}
					return list, nil
				},
				WatchFunc: func(metav1.ListOptions) (watch.Interface, error) {
					return watch.NewProxyWatcher(events), nil
				},
			}
			inf := cache.NewSharedIndexInformer(noWatchList{lw}, &corev1.ConfigMap{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			counters := make([]*counter, 3)
			for i := range counters {
				c := &counter{done: make(chan struct{})}
				counters[i] = c
				if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
					AddFunc:    func(any) { c.add() },
					UpdateFunc: func(_, _ any) { c.update() },
				}); err != nil {
					b.Fatal(err)
				}
			}
			heap := startHeapSampler()
			ctx, cancel := context.WithCancel(context.Background())
			start := time.Now()
			done := make(chan struct{})
			go func() { defer close(done); inf.RunWithContext(ctx) }()
			waitSynced(inf.HasSynced)
			m.synced += time.Since(start)
			for _, u := range w.updates {
				events <- watch.Event{Type: watch.Modified, Object: u}
			}
			for _, c := range counters {
				<-c.done
			}
			m.delivered += time.Since(start)
			m.peakMB += heap.Stop()
			cancel()
			<-done
		}
		m.report(b)
	})
}

// chanWatch is a reflector.Watch over a channel the benchmark feeds; Stop does not
// close it (the benchmark owns it) — the reflector stops reading on ctx cancel.
type chanWatch[T any] struct{ ch chan reflector.Event[T] }

func (c chanWatch[T]) ResultChan() <-chan reflector.Event[T] { return c.ch }
func (c chanWatch[T]) Stop()                                 {}

// noWatchList tells client-go's reflector that this source cannot do the streaming
// watch-list (on by default in client-go 1.35+), so both sides take the same
// LIST-then-WATCH path; our informer's default is that path too.
type noWatchList struct{ *cache.ListWatch }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }
