package workqueue

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/trace"
)

// traced renders the events the way these tests compare them: the sentence, which
// holds every fact the kind sets.
func traced(events []trace.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = string(e.Stage) + " " + e.Source + ": " + e.String()
	}
	return out
}

func TestTheWorkqueueTracesEveryOperationInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec trace.Recorder
		limiter, err := NewItemExponentialFailureRateLimiter[string](ExponentialFailureOptions{})
		require.NoError(t, err)
		q := NewRateLimitingQueue(RateLimitingOptions[string]{
			Options:     Options{Name: "foos", Tracer: trace.New(rec.Record)},
			RateLimiter: limiter,
		})
		q.Add("default/a")
		q.Add("default/b")
		q.Add("default/a") // already waiting
		time.Sleep(3 * time.Millisecond)
		item, _ := q.Get()
		require.Equal(t, "default/a", item)
		q.Add("default/a") // while processing: dirty
		q.Done(item)       // queued again
		item, _ = q.Get()  // default/b
		q.AddRateLimited(item)
		q.AddRateLimited(item)
		q.Forget(item)
		q.Done(item)
		time.Sleep(20 * time.Millisecond) // let the delayed adds fire
		synctest.Wait()
		q.AddAfter("default/c", time.Second)
		require.NoError(t, q.ShutDownWithDrain(context.Background()))
		q.Add("default/d")

		assert.Equal(t, []string{
			"workqueue foos: added default/a: new (queue 1)",
			"workqueue foos: added default/b: new (queue 2)",
			"workqueue foos: added default/a: deduplicated, already waiting",
			"workqueue foos: got default/a after 3.000ms in the queue (queue 1 left)",
			"workqueue foos: added default/a: being processed, marked dirty (queued again at Done)",
			"workqueue foos: done default/a: requeued (added while processing)",
			"workqueue foos: got default/b after 3.000ms in the queue (queue 1 left)",
			"workqueue foos: rate limited default/b: retry in 5.000ms (requeue 1)",
			"workqueue foos: rate limited default/b: retry in 10.000ms (requeue 2)",
			"workqueue foos: forgot default/b (backoff reset)",
			"workqueue foos: done default/b",
			// The waiting list keeps one entry per item (the earliest), so b comes back once.
			"workqueue foos: added default/b: new (queue 2)",
			"workqueue foos: added after default/c: due in 1000.000ms",
			"workqueue foos: shut down: drain",
			"workqueue foos: added default/d: shutting down",
		}, traced(rec.Events()))
	})
}

func TestAQueueWithoutATracerAllocatesNothingPerCycle(t *testing.T) {
	q := NewQueue[int](Options{})
	q.Add(0) // the first Add sizes the maps
	item, _ := q.Get()
	q.Done(item)
	allocs := testing.AllocsPerRun(1000, func() {
		q.Add(1)
		item, _ := q.Get()
		q.Done(item)
	})
	assert.Zero(t, allocs, "a nil tracer must cost no allocation")
}
