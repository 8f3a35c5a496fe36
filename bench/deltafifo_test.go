package bench

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/bench/internal/sidebyside"
	"github.com/kubeinternals/informers/deltafifo"
)

// The queue workloads: 10,000 pods in 100 namespaces, every one a distinct key.
const fifoObjects = 10_000

// fifoPods returns the workload twice: typed for our queues, as []any for client-go's.
func fifoPods() ([]*corev1.Pod, []any) {
	pods := make([]*corev1.Pod, fifoObjects)
	anys := make([]any, fifoObjects)
	for i := range pods {
		pods[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace:       fmt.Sprintf("ns-%d", i%100),
			Name:            fmt.Sprintf("pod-%d", i),
			ResourceVersion: "1",
		}}
		anys[i] = pods[i]
	}
	return pods, anys
}

// fifoDrain is the consumer both sides run: count the popped deltas.
type fifoDrain struct{ n int }

func (d *fifoDrain) ours(deltas deltafifo.Deltas[*corev1.Pod], _ bool) error {
	d.n += len(deltas)
	return nil
}

func (d *fifoDrain) clientGo(obj any, _ bool) error {
	d.n += len(obj.(cache.Deltas))
	return nil
}

func (d *fifoDrain) check(b *testing.B, want int) {
	if d.n != want {
		b.Fatalf("popped %d deltas, want %d", d.n, want)
	}
	d.n = 0
}

// BenchmarkDeltaFIFOAddPop10k: Add 10,000 distinct objects to a DeltaFIFO, then Pop
// them all. One op is the whole cycle; the queue is reused across ops.
//
// Fair: our DeltaFIFO against client-go's DeltaFIFO (with Replaced deltas on, as its
// informers configure it), the same objects and the same counting consumer.
func BenchmarkDeltaFIFOAddPop10k(b *testing.B) {
	pods, anys := fifoPods()
	sidebyside.Pair(b, func(b *testing.B) {
		q := deltafifo.NewDeltaFIFO(deltafifo.DeltaFIFOOptions[*corev1.Pod]{})
		ctx := context.Background()
		var d fifoDrain
		sidebyside.Loop(b, func() {
			for _, p := range pods {
				if err := q.Add(p); err != nil {
					b.Fatal(err)
				}
			}
			for range fifoObjects {
				if err := q.Pop(ctx, d.ours); err != nil {
					b.Fatal(err)
				}
			}
			d.check(b, fifoObjects)
		})
	}, func(b *testing.B) {
		q := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc, EmitDeltaTypeReplaced: true})
		var d fifoDrain
		sidebyside.Loop(b, func() {
			for _, p := range anys {
				if err := q.Add(p); err != nil {
					b.Fatal(err)
				}
			}
			for range fifoObjects {
				if _, err := q.Pop(d.clientGo); err != nil {
					b.Fatal(err)
				}
			}
			d.check(b, fifoObjects)
		})
	})
}

// BenchmarkDeltaFIFOReplace10k: Replace with a list of 10,000 objects into a new,
// empty DeltaFIFO (an informer's first LIST). The queue is not drained.
//
// Fair: DeltaFIFO against DeltaFIFO, the same list; client-go's takes it as []any
// built once outside the loop, as its reflector hands it over.
func BenchmarkDeltaFIFOReplace10k(b *testing.B) {
	pods, anys := fifoPods()
	sidebyside.Pair(b, func(b *testing.B) {
		sidebyside.Loop(b, func() {
			q := deltafifo.NewDeltaFIFO(deltafifo.DeltaFIFOOptions[*corev1.Pod]{})
			if err := q.Replace(pods, "1"); err != nil {
				b.Fatal(err)
			}
		})
	}, func(b *testing.B) {
		sidebyside.Loop(b, func() {
			q := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc, EmitDeltaTypeReplaced: true})
			if err := q.Replace(anys, "1"); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// clientGoRealFIFO is client-go 1.37's informer configuration of RealFIFO.
func clientGoRealFIFO() *cache.RealFIFO {
	return cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{
		KeyFunction:           cache.MetaNamespaceKeyFunc,
		AtomicEvents:          true,
		UnlockWhileProcessing: true,
		EmitDeltaTypeBookmark: true,
	})
}

// BenchmarkRealFIFOAddPop10k: Add 10,000 distinct objects to a RealFIFO, then Pop
// them one by one.
//
// Fair: our RealFIFO against client-go's, configured as client-go 1.37's informers
// configure it (clientGoRealFIFO); the same objects and consumer.
func BenchmarkRealFIFOAddPop10k(b *testing.B) {
	pods, anys := fifoPods()
	sidebyside.Pair(b, func(b *testing.B) {
		q := deltafifo.NewRealFIFO(deltafifo.RealFIFOOptions[*corev1.Pod]{EmitBookmark: true})
		ctx := context.Background()
		var d fifoDrain
		sidebyside.Loop(b, func() {
			for _, p := range pods {
				if err := q.Add(p); err != nil {
					b.Fatal(err)
				}
			}
			for range fifoObjects {
				if err := q.Pop(ctx, d.ours); err != nil {
					b.Fatal(err)
				}
			}
			d.check(b, fifoObjects)
		})
	}, func(b *testing.B) {
		q := clientGoRealFIFO()
		var d fifoDrain
		sidebyside.Loop(b, func() {
			for _, p := range anys {
				if err := q.Add(p); err != nil {
					b.Fatal(err)
				}
			}
			for range fifoObjects {
				if _, err := q.Pop(d.clientGo); err != nil {
					b.Fatal(err)
				}
			}
			d.check(b, fifoObjects)
		})
	})
}

// BenchmarkRealFIFOAddPopBatch10k: Add 10,000 distinct objects to a RealFIFO, then
// drain it with PopBatch (ten batches of 1,000).
//
// Fair: as BenchmarkRealFIFOAddPop10k, with each side's batch pop.
func BenchmarkRealFIFOAddPopBatch10k(b *testing.B) {
	pods, anys := fifoPods()
	sidebyside.Pair(b, func(b *testing.B) {
		q := deltafifo.NewRealFIFO(deltafifo.RealFIFOOptions[*corev1.Pod]{EmitBookmark: true})
		ctx := context.Background()
		var d fifoDrain
		batch := func(deltas []deltafifo.Delta[*corev1.Pod], _ bool) error {
			d.n += len(deltas)
			return nil
		}
		sidebyside.Loop(b, func() {
			for _, p := range pods {
				if err := q.Add(p); err != nil {
					b.Fatal(err)
				}
			}
			for d.n < fifoObjects {
				if err := q.PopBatch(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			d.check(b, fifoObjects)
		})
	}, func(b *testing.B) {
		q := clientGoRealFIFO()
		var d fifoDrain
		batch := func(deltas []cache.Delta, _ bool) error {
			d.n += len(deltas)
			return nil
		}
		sidebyside.Loop(b, func() {
			for _, p := range anys {
				if err := q.Add(p); err != nil {
					b.Fatal(err)
				}
			}
			for d.n < fifoObjects {
				if err := q.PopBatch(batch, d.clientGo); err != nil {
					b.Fatal(err)
				}
			}
			d.check(b, fifoObjects)
		})
	})
}
