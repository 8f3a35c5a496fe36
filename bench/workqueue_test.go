package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/kubeinternals/informers/bench/internal/sidebyside"
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
//
// Fair: both sides run the same harness (produceConsume) through a one-method-call
// interface on the typed queue, with the same keys and goroutine counts; only the
// queue differs.
func BenchmarkQueueAddGetDone4x4(b *testing.B) {
	run := func(b *testing.B, q workQueue) {
		b.ReportAllocs()
		b.ResetTimer()
		produceConsume(q, 4, 4, b.N, func(i int) int { return i })
	}
	sidebyside.Pair(b, func(b *testing.B) {
		run(b, ours.NewQueue[int](ours.Options{}))
	}, func(b *testing.B) {
		run(b, workqueue.NewTyped[int]())
	})
}

// BenchmarkQueueHeavyDuplicates: one op is a fresh queue taking 100,000 Adds over only
// 1,000 keys from 4 concurrent producers, all before any consumer starts (99% of them
// find their key already waiting and are deduplicated); then 4 consumers drain it,
// and while processing each key divisible by 10 for the first time they Add it again
// (it is processing, so the queue marks it dirty and hands it out again after Done).
// Every op therefore processes exactly 1,000 + 100 items, on both sides; the
// benchmark fails if either side processes another number.
//
// Fair: the same adds, the same script of re-adds and the same harness on both sides;
// the work per op no longer depends on how fast consumers keep up with producers (it
// did before: client-go processed 13,630 items/op in one run and 2,142 in another).
func BenchmarkQueueHeavyDuplicates(b *testing.B) {
	const adds, keys, want = 100_000, 1000, 1100
	key := func(i int) int { return (i * 7919) % keys }
	run := func(b *testing.B, newQueue func() workQueue) {
		sidebyside.Loop(b, func() {
			if n := heavyDuplicates(newQueue(), adds, keys, key); n != want {
				b.Fatalf("processed %d items, want %d", n, want)
			}
		})
		b.ReportMetric(float64(want), "processed/op")
	}
	sidebyside.Pair(b, func(b *testing.B) {
		run(b, func() workQueue { return ours.NewQueue[int](ours.Options{}) })
	}, func(b *testing.B) {
		run(b, func() workQueue { return workqueue.NewTyped[int]() })
	})
}

// heavyDuplicates runs one op of BenchmarkQueueHeavyDuplicates on q and returns how
// many items the consumers processed.
func heavyDuplicates(q workQueue, adds, keys int, key func(int) int) int64 {
	var pw sync.WaitGroup
	for p := range 4 {
		pw.Go(func() {
			for i := p; i < adds; i += 4 {
				q.Add(key(i))
			}
		})
	}
	pw.Wait()
	// Every key is processed once, the re-added ones twice. Both queues drop an Add
	// that arrives after ShutDown, so the queue is shut down only once the last
	// expected item is done.
	expected := int64(keys + keys/10)
	seen := make([]atomic.Int32, keys)
	var n atomic.Int64
	allDone := make(chan struct{})
	var cw sync.WaitGroup
	for range 4 {
		cw.Go(func() {
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				if seen[item].Add(1) == 1 && item%10 == 0 {
					q.Add(item) // re-added while processing: handed out again after Done
				}
				q.Done(item)
				if n.Add(1) == expected {
					close(allDone)
				}
			}
		})
	}
	select {
	case <-allDone:
	case <-time.After(time.Minute): // a queue that loses items: the caller fails on the count
	}
	q.ShutDown()
	cw.Wait()
	return n.Load()
}

// BenchmarkDelayingQueueAddAfterDrain: one op is a fresh delaying queue, 10,000
// AddAfter calls with delays spread over 1µs..1ms (the same pseudo-random delays on
// both sides), then Get and Done of all 10,000 items as they fall due. It runs on the
// real clock, so every op takes at least about 1ms.
//
// Fair: the same delays in the same order through the same interface; both queues
// wait on the real clock, so the floor of about 1 ms is common to both.
func BenchmarkDelayingQueueAddAfterDrain(b *testing.B) {
	const items = 10_000
	r := rand.New(rand.NewPCG(1, 2))
	delays := make([]time.Duration, items)
	for i := range delays {
		delays[i] = time.Microsecond + time.Duration(r.Int64N(int64(time.Millisecond)))
	}
	run := func(b *testing.B, newQueue func() delayingWorkQueue) {
		sidebyside.Loop(b, func() {
			q := newQueue()
			for i, d := range delays {
				q.AddAfter(i, d)
			}
			for range items {
				item, _ := q.Get()
				q.Done(item)
			}
			q.ShutDown()
		})
	}
	sidebyside.Pair(b, func(b *testing.B) {
		run(b, func() delayingWorkQueue { return ours.NewDelayingQueue[int](ours.Options{}) })
	}, func(b *testing.B) {
		run(b, func() delayingWorkQueue { return workqueue.NewTypedDelayingQueue[int]() })
	})
}

// BenchmarkRateLimitingQueueRetryCycle: one op is AddRateLimited then Forget of one of
// 1,000 keys, in turn, with each side's default controller rate limiter (per-item
// exponential backoff from 5ms, and a 10 qps / burst 100 token bucket). The bucket
// soon pushes retries minutes into the future, so the op measures the limiter and
// the delaying queue's bookkeeping, not items falling due.
//
// Fair: each side's default limiter has the same parameters (5 ms base, 1000 s cap,
// 10 qps, burst 100); the same keys in the same order.
func BenchmarkRateLimitingQueueRetryCycle(b *testing.B) {
	const keys = 1000
	run := func(b *testing.B, q rateLimitedWorkQueue) {
		defer q.ShutDown()
		i := 0
		sidebyside.Loop(b, func() {
			k := i % keys
			i++
			q.AddRateLimited(k)
			q.Forget(k)
		})
	}
	sidebyside.Pair(b, func(b *testing.B) {
		run(b, ours.NewRateLimitingQueue(ours.RateLimitingOptions[int]{}))
	}, func(b *testing.B) {
		run(b, workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[int]()))
	})
}

// BenchmarkParallelizeUntil: one op fills a 10,000-entry table, each piece a small
// computation, on 1, 4 or 16 workers in chunks of 1 or 100 pieces.
//
// Fair: the same work function, workers and chunk size on both sides.
// [client-go: BenchmarkParallelizeUntil]
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
	for _, workers := range []int{1, 4, 16} {
		for _, chunk := range []int{1, 100} {
			b.Run(fmt.Sprintf("workers=%d/chunk=%d", workers, chunk), func(b *testing.B) {
				sidebyside.Pair(b, func(b *testing.B) {
					sidebyside.Loop(b, func() {
						if err := ours.ParallelizeUntil(context.Background(), workers, pieces, work, ours.ParallelizeOptions{ChunkSize: chunk}); err != nil {
							b.Fatal(err)
						}
					})
				}, func(b *testing.B) {
					sidebyside.Loop(b, func() {
						workqueue.ParallelizeUntil(context.Background(), workers, pieces, work, workqueue.WithChunkSize(chunk))
					})
				})
			})
		}
	}
}

// BenchmarkQueueAddGetDoneWithBacklog: one Add, Get and Done per op, as in
// BenchmarkSeedQueueAddGetDone, but on a queue that always holds 10,000 waiting items,
// so the dirty set is large and its lookups miss the cache.
//
// Fair: the same backlog and the same sequence of keys on both sides.
func BenchmarkQueueAddGetDoneWithBacklog(b *testing.B) {
	const backlog = 10_000
	run := func(b *testing.B, q workQueue) {
		defer q.ShutDown()
		for i := range backlog {
			q.Add(i)
		}
		i := backlog
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
