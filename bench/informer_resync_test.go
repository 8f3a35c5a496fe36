package bench

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/bench/internal/sidebyside"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/reflector"
)

// resyncWatch records, across every handler of one op, when the first resync update
// arrived and when the last handler received its last one.
type resyncWatch struct {
	mu          sync.Mutex
	want        int
	seen        []int
	first, last time.Time
	done        chan struct{}
	finished    int
}

func newResyncWatch(handlers, want int) *resyncWatch {
	return &resyncWatch{want: want, seen: make([]int, handlers), done: make(chan struct{})}
}

// update is handler h's UpdateFunc: a resync delivers the cached object as both old
// and new.
func (r *resyncWatch) update(h int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first.IsZero() {
		r.first = time.Now()
	}
	if r.seen[h]++; r.seen[h] == r.want {
		if r.finished++; r.finished == len(r.seen) {
			r.last = time.Now()
			close(r.done)
		}
	}
}

// BenchmarkInformerResync: an informer holding 10,000 ConfigMaps resyncs every second
// to 1 or 10 handlers. One op waits for one full resync — every handler has been
// handed every object again — and reports ms/resync, the time from the first resync
// update to the last handler's last. The op itself lasts about the 1 s period, so
// ns/op says little: compare ms/resync.
//
// Fair: the same objects, period (1 s, the minimum both allow) and handlers on both
// sides; RealFIFO on both; a handler counts only updates whose old and new object are
// the same resourceVersion (a resync), on both sides.
//
// Not in the headline: the op time is the resync period on both sides; ms/resync is
// the comparison. [client-go: BenchmarkReflectorResyncChanMany measures the timer only]
func BenchmarkInformerResync(b *testing.B) {
	const n = 10_000
	w := newInformerWorkload(n)
	for _, handlers := range []int{1, 10} {
		b.Run(fmt.Sprintf("handlers=%d", handlers), func(b *testing.B) {
			// Why swapping the watch between ops is safe: an op ends when every
			// handler has had the whole resync, and the next resync is a second away.
			var rw atomic.Pointer[resyncWatch]
			var ms float64
			ops := 0
			op := func(b *testing.B) {
				b.StopTimer()
				r := newResyncWatch(handlers, n)
				rw.Store(r)
				b.StartTimer()
				<-r.done
				ms += float64(r.last.Sub(r.first).Microseconds()) / 1000
				ops++
			}
			current := func() *resyncWatch { return rw.Load() }
			sidebyside.Pair(b, func(b *testing.B) {
				ms, ops = 0, 0
				events := make(chan reflector.Event[*corev1.ConfigMap])
				opts := namespaceIndexed[*corev1.ConfigMap](informer.RealFIFOQueue)
				opts.ResyncPeriod = time.Second
				inf := informer.NewSharedIndexInformer(oursSource(func() ([]*corev1.ConfigMap, string) { return w.list, strconv.Itoa(n) }, events), opts)
				rw.Store(newResyncWatch(handlers, n))
				for h := range handlers {
					if _, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{UpdateFunc: func(old, cur *corev1.ConfigMap) {
						if old.ResourceVersion == cur.ResourceVersion {
							current().update(h)
						}
					}}); err != nil {
						b.Fatal(err)
					}
				}
				defer running(inf.Run)()
				waitSynced(inf.HasSynced)
				sidebyside.Loop(b, func() { op(b) })
				b.ReportMetric(ms/float64(ops), "ms/resync")
			}, func(b *testing.B) {
				ms, ops = 0, 0
				list := configMapList(w.list, n)
				events := make(chan watch.Event)
				inf := cache.NewSharedIndexInformer(clientGoSource(func() runtime.Object { return list }, events), &corev1.ConfigMap{}, time.Second, clientGoNamespaceIndexed)
				rw.Store(newResyncWatch(handlers, n))
				for h := range handlers {
					if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(old, cur any) {
						if old.(*corev1.ConfigMap).ResourceVersion == cur.(*corev1.ConfigMap).ResourceVersion {
							current().update(h)
						}
					}}); err != nil {
						b.Fatal(err)
					}
				}
				defer running(inf.RunWithContext)()
				waitSynced(inf.HasSynced)
				sidebyside.Loop(b, func() { op(b) })
				b.ReportMetric(ms/float64(ops), "ms/resync")
			})
		})
	}
}
