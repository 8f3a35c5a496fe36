package bench

import (
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/listers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/bench/internal/sidebyside"
	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/reflector"
)

// readsNamespace holds every pod of BenchmarkInformerReadsDuringUpdates, as in
// client-go's benchmark: each read lists the whole namespace.
const readsNamespace = "bench"

// BenchmarkInformerReadsDuringUpdates: an informer holding n pods (all in one
// namespace) applies a stream of updates from its watch while readers goroutines
// list the namespace through the cache in a loop. One op is one update sent into
// the watch; a handler acknowledges each, and at most 10 may be in flight, so the
// op time is the update's path through reflector, queue, cache and handler under
// the readers' load. It reports reads/s and writes/s.
//
// Fair: the shape of client-go's BenchmarkSharedIndexInformer (same sizes, one
// namespace, a read of the namespace with labels.Everything, 10 updates in flight),
// but each side reads through its lister (client-go's listers.New), which returns a
// slice as ours does; both informers run a RealFIFO with the namespace index; the same pods
// and the same pseudo-random sequence of updated pods on both sides.
func BenchmarkInformerReadsDuringUpdates(b *testing.B) {
	for _, n := range []int{10_000, 160_000} {
		pods := make([]*corev1.Pod, n)
		for i := range pods {
			pods[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: readsNamespace, Name: "pod-" + strconv.Itoa(i), ResourceVersion: "1"}}
		}
		for _, readers := range []int{0, 8, 80} {
			b.Run(fmt.Sprintf("n=%s/readers=%d", count(n), readers), func(b *testing.B) {
				sidebyside.Pair(b, func(b *testing.B) { oursReadsDuringUpdates(b, pods, readers) },
					func(b *testing.B) { clientGoReadsDuringUpdates(b, pods, readers) })
			})
		}
	}
}

// readLoad runs readers goroutines calling read until stopped, and counts reads.
type readLoad struct {
	stop  chan struct{}
	wg    sync.WaitGroup
	reads atomic.Int64
}

func startReaders(readers int, read func() int) *readLoad {
	l := &readLoad{stop: make(chan struct{})}
	for range readers {
		// Goroutines owned by the load: they exit when stop is closed.
		l.wg.Go(func() {
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				if read() < 0 {
					panic("unreachable")
				}
				l.reads.Add(1)
			}
		})
	}
	return l
}

func (l *readLoad) Stop() { close(l.stop); l.wg.Wait() }

// updateStream is the writer's side: one op sends one Modified event and waits for
// a slot among the 10 in flight; the handler frees a slot per update it sees.
type updateStream struct {
	inFlight chan struct{}
	writes   atomic.Int64
	rng      *rand.Rand
	rv       int
}

func newUpdateStream() *updateStream {
	return &updateStream{inFlight: make(chan struct{}, 10), rng: rand.New(rand.NewPCG(7, 8)), rv: 1}
}

func (u *updateStream) handled() {
	u.writes.Add(1)
	select {
	case <-u.inFlight:
	default:
	}
}

// next returns a copy of a pseudo-random pod with a new resourceVersion.
func (u *updateStream) next(pods []*corev1.Pod) *corev1.Pod {
	u.rv++
	p := *pods[u.rng.IntN(len(pods))]
	p.ResourceVersion = strconv.Itoa(u.rv)
	return &p
}

// measure runs op as the benchmark loop, after an untimed warm-up and a garbage
// collection, and reports the reads and writes counted while the timer ran.
//
// Why the warm-up fills every in-flight slot: an op waits only when all 10 are taken.
// Warmed up with one op, the loop's first op found a free slot and took microseconds,
// b.Loop predicted from it and jumped to 100 ops a round, and at 160k pods with 80
// readers a side's round took 25–80 s instead of -benchtime's 0.5 s: 17 minutes of
// `make bench` for that row. With the slots full, the first timed op already waits
// for the handler, as every later one does.
//
// Why collect: each round builds a fresh informer of n pods, and the previous
// round's (the other side's, often) is garbage by then. Left to the pacer, the
// collection of that garbage landed inside some rounds' timed loops and not others:
// client-go's side at n=160k with no readers took 5.3 µs an update in some rounds
// and 10–13 µs in others, an interval of 0.31–1.85.
func (u *updateStream) measure(b *testing.B, l *readLoad, op func()) {
	b.ReportAllocs()
	for range cap(u.inFlight) {
		op()
	}
	goruntime.GC()
	u.writes.Store(0)
	l.reads.Store(0)
	for b.Loop() {
		op()
	}
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(l.reads.Load())/s, "reads/s")
	b.ReportMetric(float64(u.writes.Load())/s, "writes/s")
}

func oursReadsDuringUpdates(b *testing.B, pods []*corev1.Pod, readers int) {
	events := make(chan reflector.Event[*corev1.Pod], 1)
	inf := informer.NewSharedIndexInformer(oursSource(func() ([]*corev1.Pod, string) { return pods, "1" }, events), namespaceIndexed[*corev1.Pod](informer.RealFIFOQueue))
	u := newUpdateStream()
	if _, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.Pod]{UpdateFunc: func(_, _ *corev1.Pod) { u.handled() }}); err != nil {
		b.Fatal(err)
	}
	defer running(inf.Run)()
	waitSynced(inf.HasSynced)
	lister := indexer.NewLister(inf.Indexer()).Namespace(readsNamespace)
	load := startReaders(readers, func() int {
		got, err := lister.List(labels.Everything())
		if err != nil {
			b.Error(err)
		}
		return len(got)
	})
	defer load.Stop()
	op := func() {
		events <- reflector.Event[*corev1.Pod]{Type: watch.Modified, Object: u.next(pods)}
		u.inFlight <- struct{}{}
	}
	u.measure(b, load, op)
}

func clientGoReadsDuringUpdates(b *testing.B, pods []*corev1.Pod, readers int) {
	list := podList(pods, 1)
	events := make(chan watch.Event, 1)
	inf := cache.NewSharedIndexInformer(clientGoSource(func() runtime.Object { return list }, events), &corev1.Pod{}, 0, clientGoNamespaceIndexed)
	u := newUpdateStream()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, _ any) { u.handled() }}); err != nil {
		b.Fatal(err)
	}
	defer running(inf.RunWithContext)()
	waitSynced(inf.HasSynced)
	lister := listers.NewNamespaced(listers.New[*corev1.Pod](inf.GetIndexer(), podsResource), readsNamespace)
	load := startReaders(readers, func() int {
		got, err := lister.List(labels.Everything())
		if err != nil {
			b.Error(err)
		}
		return len(got)
	})
	defer load.Stop()
	op := func() {
		events <- watch.Event{Type: watch.Modified, Object: u.next(pods)}
		u.inFlight <- struct{}{}
	}
	u.measure(b, load, op)
}
