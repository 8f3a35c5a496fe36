package bench

import (
	"testing"

	"k8s.io/client-go/util/workqueue"

	"github.com/kubeinternals/informers/bench/internal/sidebyside"
	ours "github.com/kubeinternals/informers/workqueue"
)

// BenchmarkSeedQueueAddGetDone is the first pair this repository measured (hence
// "Seed"): one Add, Get, Done cycle per op on an otherwise empty queue.
//
// Fair: the same keys in the same order on each side's typed queue.
func BenchmarkSeedQueueAddGetDone(b *testing.B) {
	run := func(b *testing.B, q workQueue) {
		defer q.ShutDown()
		i := 0
		sidebyside.Loop(b, func() {
			q.Add(i)
			i++
			item, _ := q.Get()
			q.Done(item)
		})
	}
	sidebyside.Pair(b, func(b *testing.B) {
		run(b, ours.NewQueue[int](ours.Options{}))
	}, func(b *testing.B) {
		run(b, workqueue.NewTyped[int]())
	})
}
