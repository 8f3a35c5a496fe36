package parity

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kubeinternals/informers/workqueue"
	"github.com/stretchr/testify/require"
	cgwq "k8s.io/client-go/util/workqueue"
)

// counting counts what a metrics provider of either library was asked for and
// recorded. The metric methods have the same shape in both libraries, so one type
// serves as the metric of both; the providers differ only in their return types.
type counting struct{ created, recorded int }

func (c *counting) Inc()            { c.recorded++ }
func (c *counting) Dec()            { c.recorded++ }
func (c *counting) Set(float64)     { c.recorded++ }
func (c *counting) Observe(float64) { c.recorded++ }

type oursProvider struct{ *counting }

func (p oursProvider) metric() *counting                                      { p.created++; return p.counting }
func (p oursProvider) NewDepthMetric(string) workqueue.GaugeMetric            { return p.metric() }
func (p oursProvider) NewAddsMetric(string) workqueue.CounterMetric           { return p.metric() }
func (p oursProvider) NewLatencyMetric(string) workqueue.HistogramMetric      { return p.metric() }
func (p oursProvider) NewWorkDurationMetric(string) workqueue.HistogramMetric { return p.metric() }
func (p oursProvider) NewRetriesMetric(string) workqueue.CounterMetric        { return p.metric() }
func (p oursProvider) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return p.metric()
}
func (p oursProvider) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return p.metric()
}

type cgProvider struct{ *counting }

func (p cgProvider) metric() *counting                                 { p.created++; return p.counting }
func (p cgProvider) NewDepthMetric(string) cgwq.GaugeMetric            { return p.metric() }
func (p cgProvider) NewAddsMetric(string) cgwq.CounterMetric           { return p.metric() }
func (p cgProvider) NewLatencyMetric(string) cgwq.HistogramMetric      { return p.metric() }
func (p cgProvider) NewWorkDurationMetric(string) cgwq.HistogramMetric { return p.metric() }
func (p cgProvider) NewRetriesMetric(string) cgwq.CounterMetric        { return p.metric() }
func (p cgProvider) NewUnfinishedWorkSecondsMetric(string) cgwq.SettableGaugeMetric {
	return p.metric()
}
func (p cgProvider) NewLongestRunningProcessorSecondsMetric(string) cgwq.SettableGaugeMetric {
	return p.metric()
}

// client-go: util/workqueue/metrics.go newQueueMetrics
var _ = exception("docs/defaults.md", "Workqueue", "metrics", func(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		theirs := &counting{}
		cq := cgwq.NewTypedWithConfig(cgwq.TypedQueueConfig[int]{MetricsProvider: cgProvider{theirs}})
		cq.Add(1)
		item, _ := cq.Get()
		cq.Done(item)
		cq.ShutDown()
		require.Equal(t, counting{}, *theirs, "client-go: an unnamed queue with a provider records nothing")

		ours := &counting{}
		q := workqueue.NewQueue[int](workqueue.Options{MetricsProvider: oursProvider{ours}})
		q.Add(1)
		item, _ = q.Get()
		q.Done(item)
		q.ShutDown()
		require.Equal(t, 6, ours.created, "ours: an unnamed queue with a provider creates its six queue metrics")
		require.Positive(t, ours.recorded, "ours: and records Add, Get and Done")
	})
})

// client-go: util/workqueue/rate_limiting_queue.go NewTypedRateLimitingQueue
var _ = exception("docs/defaults.md", "Workqueue", "rate limiter of a rate-limiting queue", func(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cq := cgwq.NewTypedRateLimitingQueue[int](nil)
		require.Panics(t, func() { cq.AddRateLimited(1) }, "client-go: the limiter is required; nil fails at the first use")
		cq.ShutDown()

		q := workqueue.NewRateLimitingQueue(workqueue.RateLimitingOptions[int]{})
		start := time.Now()
		q.AddRateLimited(1)
		require.Equal(t, 1, q.NumRequeues(1), "ours: nil means DefaultControllerRateLimiter, which counts failures")
		item, _ := q.Get()
		require.Equal(t, 1, item)
		require.Equal(t, 5*time.Millisecond, time.Since(start), "ours: the default's first delay is 5ms")
		q.Done(item)
		q.ShutDown()
	})
})

// client-go: util/workqueue/delaying_queue.go newDelayingQueue
var _ = exception("docs/defaults.md", "Workqueue", "delaying queue", func(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := bubbleGoroutines(t)
		cq := cgwq.NewTypedDelayingQueue[int]()
		synctest.Wait()
		require.Equal(t, before+1, bubbleGoroutines(t), "client-go: the constructor starts the waiting loop")
		cq.ShutDown()
		synctest.Wait()
		require.Equal(t, before, bubbleGoroutines(t), "client-go: ShutDown ends it")

		q := workqueue.NewDelayingQueue[int](workqueue.Options{})
		q.AddAfter(1, time.Hour)
		synctest.Wait()
		require.Equal(t, before, bubbleGoroutines(t), "ours: no goroutine, though an item waits an hour")
		q.ShutDown()
	})
})

// client-go: util/workqueue/queue.go Typed.ShutDownWithDrain
var _ = exception("docs/defaults.md", "Workqueue", "`ShutDownWithDrain`", func(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cq := cgwq.NewTyped[int]()
		cq.Add(1)
		item, _ := cq.Get()
		returned := make(chan struct{})
		go func() { cq.ShutDownWithDrain(); close(returned) }()
		time.Sleep(24 * time.Hour)
		synctest.Wait()
		require.False(t, isClosed(returned), "client-go: still blocked a day later, the item not Done")
		cq.Done(item)
		synctest.Wait()
		require.True(t, isClosed(returned), "client-go: Done releases it")

		q := workqueue.NewQueue[int](workqueue.Options{})
		q.Add(1)
		_, _ = q.Get()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		err := q.ShutDownWithDrain(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded, "ours: the context bounds the wait")
		require.Equal(t, time.Second, time.Since(start))
	})
})

// client-go: util/workqueue/queue.go Typed.Done
var _ = exception("docs/parity.md", "Differences found by the suite", "two `ShutDownWithDrain` calls waiting", func(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cq := cgwq.NewTyped[int]()
		cq.Add(1)
		item, _ := cq.Get()
		a, b := make(chan struct{}), make(chan struct{})
		go func() { cq.ShutDownWithDrain(); close(a) }()
		go func() { cq.ShutDownWithDrain(); close(b) }()
		synctest.Wait()
		cq.Done(item)
		synctest.Wait()
		require.NotEqual(t, isClosed(a), isClosed(b), "client-go: the last Done wakes exactly one drain")
		cq.ShutDown() // ends the other

		q := workqueue.NewQueue[int](workqueue.Options{})
		q.Add(1)
		item, _ = q.Get()
		errs := make(chan error, 2)
		for range 2 {
			go func() { errs <- q.ShutDownWithDrain(context.Background()) }()
		}
		synctest.Wait()
		q.Done(item)
		synctest.Wait()
		require.Len(t, errs, 2, "ours: the last Done ends every drain")
		require.NoError(t, errors.Join(<-errs, <-errs))
	})
})

// client-go: util/workqueue/delaying_queue.go delayingType.ShutDown
var _ = exception("docs/parity.md", "Differences found by the suite", "`ShutDown` of a delaying queue during a drain", func(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cq := cgwq.NewTypedDelayingQueue[int]()
		cq.Add(1)
		item, _ := cq.Get()
		cq.ShutDown()
		returned := make(chan struct{})
		go func() { cq.ShutDownWithDrain(); close(returned) }()
		cq.ShutDown()
		synctest.Wait()
		require.False(t, isClosed(returned), "client-go: only the first ShutDown reaches the queue; the drain goes on")
		cq.Done(item)
		synctest.Wait()
		require.True(t, isClosed(returned))

		q := workqueue.NewDelayingQueue[int](workqueue.Options{})
		q.Add(1)
		_, _ = q.Get()
		q.ShutDown()
		errc := make(chan error, 1)
		go func() { errc <- q.ShutDownWithDrain(context.Background()) }()
		synctest.Wait()
		q.ShutDown()
		synctest.Wait()
		require.Len(t, errc, 1, "ours: every ShutDown ends a drain")
		require.ErrorIs(t, <-errc, workqueue.ErrDrainAborted)
	})
})

// client-go: util/workqueue/delaying_queue.go waitForPriorityQueue
var _ = exception("docs/parity.md", "Differences found by the suite", "items due at the same instant", func(t *testing.T) {
	// Three entries, two of them due at +3s: after the earliest leaves, client-go's
	// heap holds the last one added at its top.
	order := func(q interface {
		AddAfter(int, time.Duration)
		Get() (int, bool)
		Done(int)
		ShutDown()
	}) []int {
		q.AddAfter(1, 3*time.Second)
		q.AddAfter(4, time.Millisecond)
		q.AddAfter(2, 3*time.Second)
		var got []int
		for range 3 {
			item, _ := q.Get()
			got = append(got, item)
			q.Done(item)
		}
		q.ShutDown()
		return got
	}
	synctest.Test(t, func(t *testing.T) {
		require.Equal(t, []int{4, 2, 1}, order(cgwq.NewTypedDelayingQueue[int]()), "client-go: heap order")
	})
	synctest.Test(t, func(t *testing.T) {
		require.Equal(t, []int{4, 1, 2}, order(workqueue.NewDelayingQueue[int](workqueue.Options{})), "ours: the order of AddAfter")
	})
})

// client-go: util/workqueue/default_rate_limiters.go TypedItemExponentialFailureRateLimiter.When
var _ = exception("docs/parity.md", "Differences found by the suite", "exponential backoff beyond float64", func(t *testing.T) {
	const maxDelay = 1000 * time.Second
	theirs := cgwq.NewTypedItemExponentialFailureRateLimiter[int](time.Nanosecond, maxDelay)
	ours := must(workqueue.NewItemExponentialFailureRateLimiter[int](workqueue.ExponentialFailureOptions{BaseDelay: time.Nanosecond, MaxDelay: maxDelay}))
	for range 63 {
		theirs.When(1)
		ours.When(1)
	}
	require.Equal(t, time.Duration(math.MinInt64), theirs.When(1), "client-go: 1ns·2^63 converts to a negative delay")
	require.Equal(t, maxDelay, ours.When(1), "ours: the cap")

	const base = 1<<53 + 1 // ns, about 104 days
	theirs = cgwq.NewTypedItemExponentialFailureRateLimiter[int](base, math.MaxInt64)
	ours = must(workqueue.NewItemExponentialFailureRateLimiter[int](workqueue.ExponentialFailureOptions{BaseDelay: base, MaxDelay: math.MaxInt64}))
	require.Equal(t, time.Duration(1<<53), theirs.When(1), "client-go: the base rounded to a float64")
	require.Equal(t, time.Duration(base), ours.When(1), "ours: exact")
})
