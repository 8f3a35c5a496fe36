package workqueue_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/kubeinternals/informers/workqueue"
)

// A queue deduplicates keys that are waiting, and hands them out oldest first.
func ExampleQueue() {
	q := workqueue.NewQueue[string](workqueue.Options{})
	for _, key := range []string{"default/web", "default/db", "default/web"} {
		q.Add(key)
	}
	fmt.Println("waiting:", q.Len())

	q.ShutDown() // no more Adds; what is queued still drains
	for {
		key, shutdown := q.Get()
		if shutdown {
			break
		}
		fmt.Println("reconcile", key)
		q.Done(key)
	}
	// Output:
	// waiting: 2
	// reconcile default/web
	// reconcile default/db
}

// The worker loop of a controller: retry a failing key with backoff, forget it once it
// succeeds, and always call Done.
func ExampleRateLimitingQueue() {
	q := workqueue.NewRateLimitingQueue(workqueue.RateLimitingOptions[string]{})
	failuresLeft := map[string]int{"default/db": 2}

	reconcile := func(key string) error {
		if failuresLeft[key] > 0 {
			failuresLeft[key]--
			return errors.New("not ready")
		}
		return nil
	}

	q.Add("default/web")
	q.Add("default/db")
	for processed := 0; processed < 2; {
		key, _ := q.Get()
		if err := reconcile(key); err != nil {
			fmt.Printf("%s: %v (retry %d)\n", key, err, q.NumRequeues(key)+1)
			q.AddRateLimited(key) // back in the queue after 5ms, then 10ms
		} else {
			fmt.Printf("%s: done\n", key)
			q.Forget(key)
			processed++
		}
		q.Done(key)
	}
	q.ShutDown()
	// Output:
	// default/web: done
	// default/db: not ready (retry 1)
	// default/db: not ready (retry 2)
	// default/db: done
}

// ParallelizeUntil spreads independent pieces of work over a few goroutines.
func ExampleParallelizeUntil() {
	squares := make([]int, 10)
	var calls atomic.Int32
	err := workqueue.ParallelizeUntil(context.Background(), 3, len(squares), func(i int) {
		calls.Add(1)
		squares[i] = i * i
	}, workqueue.ParallelizeOptions{ChunkSize: 2})
	fmt.Println(squares, calls.Load(), err)
	// Output:
	// [0 1 4 9 16 25 36 49 64 81] 10 <nil>
}
