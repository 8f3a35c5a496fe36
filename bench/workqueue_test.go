package bench

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"

	ours "github.com/kubeinternals/informers/workqueue"
)

// The workqueue workloads. Each runs the identical sequence of calls on our queue and
// on client-go's typed queue, through the small interfaces below (one interface call
// per operation on both sides).

// workQueue is what both queues offer a producer/consumer harness.
type workQueue interface {
	Add(item int)
	Get() (item int, shutdown bool)
	Done(item int)
	ShutDown()
}

// delayingWorkQueue adds AddAfter.
type delayingWorkQueue interface {
	workQueue
	AddAfter(item int, delay time.Duration)
}

// rateLimitedWorkQueue is the retry half of a rate-limiting queue.
type rateLimitedWorkQueue interface {
	AddRateLimited(item int)
	Forget(item int)
	ShutDown()
}

// produceConsume runs producers goroutines that together Add keys(i) for i in [0, adds)
// and consumers goroutines that Get and Done until the queue reports shutdown. Once
// every producer is done it shuts the queue down; ShutDown lets the consumers drain
// what is queued (and what is re-queued by Done), so it returns when all work is done.
func produceConsume(q workQueue, producers, consumers, adds int, key func(i int) int) (processed int64) {
	var cw sync.WaitGroup
	var n atomic.Int64
	for range consumers {
		cw.Go(func() {
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				n.Add(1)
				q.Done(item)
			}
		})
	}
	var pw sync.WaitGroup
	for p := range producers {
		pw.Go(func() {
			for i := p; i < adds; i += producers {
				q.Add(key(i))
			}
		})
	}
	pw.Wait()
	q.ShutDown()
	cw.Wait()
	return n.Load()
}

// BenchmarkQueueAddGetDone4x4: 4 producers and 4 consumers move b.N distinct items
// through one queue; one op is one item's Add, Get and Done.
func BenchmarkQueueAddGetDone4x4(b *testing.B) {
	run := func(b *testing.B, q workQueue) {
		b.ReportAllocs()
		b.ResetTimer()
		produceConsume(q, 4, 4, b.N, func(i int) int { return i })
	}
	b.Run("ours", func(b *testing.B) {
		run(b, ours.NewQueue[int](ours.Options{}))
	})
	b.Run("client-go", func(b *testing.B) {
		run(b, workqueue.NewTyped[int]())
	})
}

// BenchmarkQueueHeavyDuplicates: one op is a fresh queue taking 100,000 Adds over only
// 1,000 keys from 4 producers while 4 consumers Get and Done, then draining. Most Adds
// hit a key that is already waiting (deduplicated) or processing (re-queued on Done).
func BenchmarkQueueHeavyDuplicates(b *testing.B) {
	const adds, keys = 100_000, 1000
	key := func(i int) int { return (i * 7919) % keys }
	// How many Gets the 100k adds turn into depends on how fast consumers keep up:
	// the faster a queue hands items out, the less dedup, the more items processed.
	// processed/op says how much work each side actually did, and ns/processed is the
	// time per item that reached a worker: the fairer comparison of the two.
	b.Run("ours", func(b *testing.B) {
		b.ReportAllocs()
		var processed int64
		for b.Loop() {
			processed += produceConsume(ours.NewQueue[int](ours.Options{}), 4, 4, adds, key)
		}
		b.ReportMetric(float64(processed)/float64(b.N), "processed/op")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(processed), "ns/processed")
	})
	b.Run("client-go", func(b *testing.B) {
		b.ReportAllocs()
		var processed int64
		for b.Loop() {
			processed += produceConsume(workqueue.NewTyped[int](), 4, 4, adds, key)
		}
		b.ReportMetric(float64(processed)/float64(b.N), "processed/op")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(processed), "ns/processed")
	})
}

// BenchmarkDelayingQueueAddAfterDrain: one op is a fresh delaying queue, 10,000
// AddAfter calls with delays spread over 1µs..1ms (the same pseudo-random delays on
// both sides), then Get and Done of all 10,000 items as they fall due. It runs on the
// real clock, so every op takes at least about 1ms.
func BenchmarkDelayingQueueAddAfterDrain(b *testing.B) {
	const items = 10_000
	r := rand.New(rand.NewPCG(1, 2))
	delays := make([]time.Duration, items)
	for i := range delays {
		delays[i] = time.Microsecond + time.Duration(r.Int64N(int64(time.Millisecond)))
	}
	run := func(b *testing.B, newQueue func() delayingWorkQueue) {
		b.ReportAllocs()
		for b.Loop() {
			q := newQueue()
			for i, d := range delays {
				q.AddAfter(i, d)
			}
			for range items {
				item, _ := q.Get()
				q.Done(item)
			}
			q.ShutDown()
		}
	}
	b.Run("ours", func(b *testing.B) {
		run(b, func() delayingWorkQueue { return ours.NewDelayingQueue[int](ours.Options{}) })
	})
	b.Run("client-go", func(b *testing.B) {
		run(b, func() delayingWorkQueue { return workqueue.NewTypedDelayingQueue[int]() })
	})
}

// BenchmarkRateLimitingQueueRetryCycle: one op is AddRateLimited then Forget of one of
// 1,000 keys, in turn, with each side's default controller rate limiter (per-item
// exponential backoff from 5ms, and a 10 qps / burst 100 token bucket). The bucket
// soon pushes retries minutes into the future, so the op measures the limiter and
// the delaying queue's bookkeeping, not items falling due.
func BenchmarkRateLimitingQueueRetryCycle(b *testing.B) {
	const keys = 1000
	run := func(b *testing.B, q rateLimitedWorkQueue) {
		defer q.ShutDown()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			k := i % keys
			q.AddRateLimited(k)
			q.Forget(k)
		}
	}
	b.Run("ours", func(b *testing.B) {
		run(b, ours.NewRateLimitingQueue(ours.RateLimitingOptions[int]{}))
	})
	b.Run("client-go", func(b *testing.B) {
		run(b, workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[int]()))
	})
}

// BenchmarkParallelizeUntil: one op fills a 10,000-entry table on 4 workers in chunks
// of 100 pieces, each piece a small computation.
func BenchmarkParallelizeUntil(b *testing.B) {
	const pieces = 10_000
	out := make([]int, pieces)
	work := func(p int) {
		x := p
		for range 20 {
			x = x*1103515245 + 12345
		}
		out[p] = x
	}
	b.Run("ours", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := ours.ParallelizeUntil(context.Background(), 4, pieces, work, ours.ParallelizeOptions{ChunkSize: 100}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("client-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			workqueue.ParallelizeUntil(context.Background(), 4, pieces, work, workqueue.WithChunkSize(100))
		}
	})
}

// BenchmarkQueueAddGetDoneWithBacklog: one Add, Get and Done per op, as in
// BenchmarkSeedQueueAddGetDone, but on a queue that always holds 10,000 waiting items, so the dirty set is
// large and its lookups miss the cache.
func BenchmarkQueueAddGetDoneWithBacklog(b *testing.B) {
	const backlog = 10_000
	run := func(b *testing.B, q workQueue) {
		defer q.ShutDown()
		for i := range backlog {
			q.Add(i)
		}
		b.ReportAllocs()
		for i := backlog; b.Loop(); i++ {
			q.Add(i)
			item, _ := q.Get()
			q.Done(item)
		}
	}
	b.Run("ours", func(b *testing.B) {
		run(b, ours.NewQueue[int](ours.Options{}))
	})
	b.Run("client-go", func(b *testing.B) {
		run(b, workqueue.NewTyped[int]())
	})
}
