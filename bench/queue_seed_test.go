package bench

import (
	"testing"

	"k8s.io/client-go/util/workqueue"

	ours "github.com/kubeinternals/informers/workqueue"
)

// BenchmarkSeedQueueAddGetDone is the first pair this repository measured (hence
// "Seed"): one Add, Get, Done cycle per op on an otherwise empty queue.
func BenchmarkSeedQueueAddGetDone(b *testing.B) {
	b.Run("ours", func(b *testing.B) {
		q := ours.NewQueue[int](ours.Options{})
		defer q.ShutDown()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			q.Add(i)
			item, _ := q.Get()
			q.Done(item)
		}
	})
	b.Run("client-go", func(b *testing.B) {
		q := workqueue.NewTyped[int]()
		defer q.ShutDown()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			q.Add(i)
			item, _ := q.Get()
			q.Done(item)
		}
	})
}
