package workqueue

import (
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeMetric records what the queue reports.
type fakeMetric struct {
	mu           sync.Mutex
	value        float64   // guarded by mu: the gauge or counter value
	observations []float64 // guarded by mu: histogram observations
}

func (m *fakeMetric) Inc() { m.mu.Lock(); m.value++; m.mu.Unlock() }
func (m *fakeMetric) Dec() { m.mu.Lock(); m.value--; m.mu.Unlock() }
func (m *fakeMetric) Set(v float64) {
	m.mu.Lock()
	m.value = v
	m.mu.Unlock()
}

func (m *fakeMetric) Observe(v float64) {
	m.mu.Lock()
	m.observations = append(m.observations, v)
	m.mu.Unlock()
}

func (m *fakeMetric) get() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.value
}

func (m *fakeMetric) observed() []float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]float64(nil), m.observations...)
}

// fakeProvider hands out fakeMetrics keyed by metric name and queue name.
type fakeProvider struct {
	mu      sync.Mutex
	metrics map[[2]string]*fakeMetric // guarded by mu
}

func newFakeProvider() *fakeProvider {
	return &fakeProvider{metrics: map[[2]string]*fakeMetric{}}
}

func (p *fakeProvider) metric(metric, queue string) *fakeMetric {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := [2]string{metric, queue}
	if p.metrics[key] == nil {
		p.metrics[key] = &fakeMetric{}
	}
	return p.metrics[key]
}

func (p *fakeProvider) NewDepthMetric(n string) GaugeMetric { return p.metric(DepthMetricName, n) }
func (p *fakeProvider) NewAddsMetric(n string) CounterMetric {
	return p.metric(AddsMetricName, n)
}
func (p *fakeProvider) NewLatencyMetric(n string) HistogramMetric {
	return p.metric(QueueDurationMetricName, n)
}
func (p *fakeProvider) NewWorkDurationMetric(n string) HistogramMetric {
	return p.metric(WorkDurationMetricName, n)
}
func (p *fakeProvider) NewUnfinishedWorkSecondsMetric(n string) SettableGaugeMetric {
	return p.metric(UnfinishedWorkMetricName, n)
}
func (p *fakeProvider) NewLongestRunningProcessorSecondsMetric(n string) SettableGaugeMetric {
	return p.metric(LongestRunningProcessorMetricName, n)
}
func (p *fakeProvider) NewRetriesMetric(n string) CounterMetric {
	return p.metric(RetriesMetricName, n)
}

func TestQueueMetrics(t *testing.T) {
	t.Run("depth counts items added and not yet handed out; adds skips duplicates", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newFakeProvider()
			q := NewQueue[string](Options{Name: "q", MetricsProvider: p})
			defer q.ShutDown()
			q.Add("a")
			q.Add("b")
			q.Add("a")
			assert.Equal(t, 2.0, p.metric(DepthMetricName, "q").get())
			assert.Equal(t, 2.0, p.metric(AddsMetricName, "q").get())
			a := get(t, q)
			assert.Equal(t, 1.0, p.metric(DepthMetricName, "q").get())
			q.Add("a") // while processing: counted, and in depth until handed out again
			assert.Equal(t, 2.0, p.metric(DepthMetricName, "q").get())
			assert.Equal(t, 3.0, p.metric(AddsMetricName, "q").get())
			q.Done(a)
			drainAll(t, q)
			assert.Equal(t, 0.0, p.metric(DepthMetricName, "q").get())
		})
	})
	t.Run("queue duration runs from the first Add to Get, work duration from Get to Done", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newFakeProvider()
			q := NewQueue[string](Options{Name: "q", MetricsProvider: p})
			defer q.ShutDown()
			q.Add("a")
			advance(2 * time.Second)
			q.Add("a") // a duplicate does not restart the clock
			advance(1 * time.Second)
			a := get(t, q)
			advance(4 * time.Second)
			q.Add("a") // re-added while processing, 4s after Get
			advance(1 * time.Second)
			q.Done(a)
			advance(2 * time.Second)
			q.Done(get(t, q))
			assert.Equal(t, []float64{3, 3}, p.metric(QueueDurationMetricName, "q").observed())
			assert.Equal(t, []float64{5, 0}, p.metric(WorkDurationMetricName, "q").observed())
		})
	})
	t.Run("unfinished work and longest running are refreshed while workers are stuck", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := newFakeProvider()
			q := NewQueue[string](Options{Name: "q", MetricsProvider: p})
			defer q.ShutDown()
			q.Add("a")
			q.Add("b")
			get(t, q)
			advance(time.Second)
			get(t, q)
			advance(time.Second) // the refresher ticks every 500ms; nobody calls Done
			assert.Equal(t, 3.0, p.metric(UnfinishedWorkMetricName, "q").get(), "2s + 1s of unfinished work")
			assert.Equal(t, 2.0, p.metric(LongestRunningProcessorMetricName, "q").get())
		})
	})
	t.Run("the refresher starts at the first Get, not in the constructor", func(t *testing.T) {
		q := NewQueue[string](Options{Name: "q", MetricsProvider: newFakeProvider()})
		defer q.ShutDown()
		q.Add("a")
		assert.False(t, startedRefresher(q))
		get(t, q)
		assert.True(t, startedRefresher(q))
	})
	t.Run("the refresher goroutine exits on ShutDown", func(t *testing.T) {
		// synctest.Test fails the test if a goroutine of the bubble is still blocked
		// after the function returns: a refresher that outlived ShutDown would do that.
		synctest.Test(t, func(t *testing.T) {
			q := NewQueue[string](Options{Name: "q", MetricsProvider: newFakeProvider()})
			q.Add("a")
			get(t, q)
			advance(time.Second)
			q.ShutDown()
		})
	})
	t.Run("without a provider no refresher ever starts", func(t *testing.T) {
		q := NewQueue[string](Options{Name: "q"})
		defer q.ShutDown()
		q.Add("a")
		get(t, q)
		assert.False(t, startedRefresher(q))
	})
	t.Run("a provider records metrics even for an unnamed queue", func(t *testing.T) {
		p := newFakeProvider()
		q := NewQueue[string](Options{MetricsProvider: p})
		defer q.ShutDown()
		q.Add("a")
		assert.Equal(t, 1.0, p.metric(AddsMetricName, "").get())
	})
	t.Run("a provider that returns nil metrics gets metrics that drop values", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := NewRateLimitingQueue(RateLimitingOptions[string]{Options: Options{Name: "q", MetricsProvider: nilProvider{}}})
			defer q.ShutDown()
			q.Add("a")
			a := get(t, q)
			q.AddRateLimited(a)
			advance(time.Second)
			q.Done(a)
			assert.Equal(t, []string{"a"}, drainAll(t, q))
		})
	})
}

func startedRefresher[T comparable](q *Queue[T]) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.refresherStarted
}

func TestRetryMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newFakeProvider()
		q := NewRateLimitingQueue(RateLimitingOptions[string]{Options: Options{Name: "rl", MetricsProvider: p}})
		q.AddAfter("a", 0)
		q.AddAfter("b", time.Second)
		q.AddRateLimited("c")
		q.Add("d") // a plain Add is not a retry
		assert.Equal(t, 3.0, p.metric(RetriesMetricName, "rl").get())
		q.ShutDown()
		q.AddAfter("e", time.Second)
		assert.Equal(t, 3.0, p.metric(RetriesMetricName, "rl").get(), "AddAfter after ShutDown is not counted")
	})
}

// nilProvider returns nil for every metric.
type nilProvider struct{}

func (nilProvider) NewDepthMetric(string) GaugeMetric                         { return nil }
func (nilProvider) NewAddsMetric(string) CounterMetric                        { return nil }
func (nilProvider) NewLatencyMetric(string) HistogramMetric                   { return nil }
func (nilProvider) NewWorkDurationMetric(string) HistogramMetric              { return nil }
func (nilProvider) NewUnfinishedWorkSecondsMetric(string) SettableGaugeMetric { return nil }
func (nilProvider) NewLongestRunningProcessorSecondsMetric(string) SettableGaugeMetric {
	return nil
}
func (nilProvider) NewRetriesMetric(string) CounterMetric { return nil }

func TestQueueMetricsBookkeepingDoesNotAllocate(t *testing.T) {
	// With metrics that do not allocate themselves, the queue's own bookkeeping (the
	// addedAt and startedAt maps) must not allocate per cycle either.
	q := NewQueue[int](Options{Name: "q", MetricsProvider: nilProvider{}})
	defer q.ShutDown()
	cycle := func() {
		q.Add(1)
		item, _ := q.Get()
		q.Done(item)
	}
	for range 100 {
		cycle()
	}
	require.Zero(t, testing.AllocsPerRun(1000, cycle))
}

// lockCheckingDepth is a depth gauge that counts the changes made without the queue's
// lock held.
type lockCheckingDepth struct {
	fakeMetric
	queueMu  *sync.Mutex
	unlocked atomic.Int64
}

func (g *lockCheckingDepth) check() {
	if g.queueMu.TryLock() {
		g.unlocked.Add(1)
		g.queueMu.Unlock()
	}
}
func (g *lockCheckingDepth) Inc() { g.check(); g.fakeMetric.Inc() }
func (g *lockCheckingDepth) Dec() { g.check(); g.fakeMetric.Dec() }

type depthProvider struct {
	*fakeProvider
	depth *lockCheckingDepth
}

func (p depthProvider) NewDepthMetric(string) GaugeMetric { return p.depth }

// The depth gauge changes under the queue's lock, as the change it counts does, so
// concurrent Adds and Gets cannot leave an empty queue reading anything but 0.
func TestTheDepthGaugeChangesUnderTheQueuesLock(t *testing.T) {
	depth := &lockCheckingDepth{}
	q := NewQueue[int](Options{Name: "q", MetricsProvider: depthProvider{newFakeProvider(), depth}})
	depth.queueMu = &q.mu
	const workers, items = 4, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range items {
				q.Add(w*items + i)
			}
		})
		wg.Go(func() {
			for range items {
				item, shutdown := q.Get()
				assert.False(t, shutdown)
				q.Done(item)
			}
		})
	}
	wg.Wait()
	assert.Zero(t, depth.unlocked.Load(), "every Inc and Dec with the queue's lock held")
	assert.Equal(t, 0.0, depth.get(), "the queue is empty")
	assert.Zero(t, q.Len())
	q.ShutDown()
}
