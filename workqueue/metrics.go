package workqueue

import "time"

// The names client-go's Prometheus provider registers (each with one label, "name",
// the queue's Options.Name). A provider that uses them keeps existing dashboards and
// alerts working. Package promprovider (github.com/kubeinternals/informers/promprovider,
// a module of its own) is a provider built on prometheus/client_golang.
//
// component-base: metrics/prometheus/workqueue/metrics.go
const (
	// DepthMetricName is a gauge: items added and not yet handed out by Get.
	DepthMetricName = "workqueue_depth"
	// AddsMetricName is a counter: Adds that were not deduplicated.
	AddsMetricName = "workqueue_adds_total"
	// QueueDurationMetricName is a histogram: seconds from Add to Get.
	QueueDurationMetricName = "workqueue_queue_duration_seconds"
	// WorkDurationMetricName is a histogram: seconds from Get to Done.
	WorkDurationMetricName = "workqueue_work_duration_seconds"
	// UnfinishedWorkMetricName is a gauge: the summed age of all items in processing.
	UnfinishedWorkMetricName = "workqueue_unfinished_work_seconds"
	// LongestRunningProcessorMetricName is a gauge: the age of the oldest item in processing.
	LongestRunningProcessorMetricName = "workqueue_longest_running_processor_seconds"
	// RetriesMetricName is a counter: AddAfter and AddRateLimited calls.
	RetriesMetricName = "workqueue_retries_total"
)

// GaugeMetric is a value that goes up and down.
//
// client-go: util/workqueue/metrics.go GaugeMetric
type GaugeMetric interface {
	Inc()
	Dec()
}

// SettableGaugeMetric is a gauge that is set to a value.
//
// client-go: util/workqueue/metrics.go SettableGaugeMetric
type SettableGaugeMetric interface {
	Set(float64)
}

// CounterMetric is a value that only goes up.
//
// client-go: util/workqueue/metrics.go CounterMetric
type CounterMetric interface {
	Inc()
}

// HistogramMetric records observations (seconds, for the queue).
//
// client-go: util/workqueue/metrics.go HistogramMetric
type HistogramMetric interface {
	Observe(float64)
}

// MetricsProvider creates the metrics of one queue; name is the queue's Options.Name.
// The queue calls each method once, in its constructor. A method that returns nil gets
// a metric that drops its values.
//
// Pitfall (client-go): client-go also has a process-wide provider set by SetProvider,
// guarded by a sync.Once: the first package whose init calls it wins, later calls are
// silently ignored, and every queue built before it has no metrics. Two libraries that
// both register a provider, or a queue built in a package-level var, lose their metrics
// without a word. We have no global provider: each queue gets its provider in Options,
// so what a queue reports is decided where the queue is built.
//
// Differences from client-go: client-go also records nothing for a queue with an empty
// Name, even when given a provider. Here a provider always means metrics; an empty Name
// becomes an empty label value.
//
// client-go: util/workqueue/metrics.go MetricsProvider
type MetricsProvider interface {
	NewDepthMetric(name string) GaugeMetric
	NewAddsMetric(name string) CounterMetric
	NewLatencyMetric(name string) HistogramMetric
	NewWorkDurationMetric(name string) HistogramMetric
	NewUnfinishedWorkSecondsMetric(name string) SettableGaugeMetric
	NewLongestRunningProcessorSecondsMetric(name string) SettableGaugeMetric
	NewRetriesMetric(name string) CounterMetric
}

// unfinishedWorkRefreshPeriod is how often the refresher recomputes the two gauges that
// describe work in progress.
//
// client-go: util/workqueue/queue.go defaultUnfinishedWorkUpdatePeriod
const unfinishedWorkRefreshPeriod = 500 * time.Millisecond

// queueMetrics records one queue's metrics. Its methods end in Locked because the
// queue's mu must be held: the maps are part of the queue's state.
//
// client-go: util/workqueue/metrics.go defaultQueueMetrics
type queueMetrics[T comparable] struct {
	// The metric handles are immutable after construction.
	depth          GaugeMetric
	adds           CounterMetric
	latency        HistogramMetric
	workDuration   HistogramMetric
	unfinishedWork SettableGaugeMetric
	longestRunning SettableGaugeMetric

	// epoch is when the queue was built; the two maps below hold times as offsets from
	// it (a time.Duration, read on the monotonic clock) rather than as time.Time.
	//
	// Why offsets: a time.Time is 24 bytes, an offset 8, and these maps hold an entry
	// per dirty item. A queue that a burst of Adds fills with 10,000 keys grows addedAt
	// to hold them all; with time.Time values that growth was most of the bytes a
	// worker pool allocated (the WorkerPool benchmark: 645 kB of 1.13 MB an op). The
	// differences between two times, the only thing the metrics use, are the same.
	epoch time.Time
	// addedAt is guarded by the queue's mu: when each dirty item was first added, for
	// the queue-duration histogram.
	addedAt map[T]time.Duration
	// startedAt is guarded by the queue's mu: when each processing item was handed out,
	// for the work-duration histogram and the two unfinished-work gauges.
	startedAt map[T]time.Duration
}

// newQueueMetrics returns nil when there is no provider: the queue then skips every
// metrics call behind one nil check, and never starts the refresher.
func newQueueMetrics[T comparable](p MetricsProvider, name string) *queueMetrics[T] {
	if p == nil {
		return nil
	}
	return &queueMetrics[T]{
		depth:          orNoop[GaugeMetric](p.NewDepthMetric(name)),
		adds:           orNoop[CounterMetric](p.NewAddsMetric(name)),
		latency:        orNoop[HistogramMetric](p.NewLatencyMetric(name)),
		workDuration:   orNoop[HistogramMetric](p.NewWorkDurationMetric(name)),
		unfinishedWork: orNoop[SettableGaugeMetric](p.NewUnfinishedWorkSecondsMetric(name)),
		longestRunning: orNoop[SettableGaugeMetric](p.NewLongestRunningProcessorSecondsMetric(name)),
		epoch:          time.Now(),
		addedAt:        make(map[T]time.Duration),
		startedAt:      make(map[T]time.Duration),
	}
}

// addedLocked records an Add that made item dirty.
//
// client-go: util/workqueue/metrics.go defaultQueueMetrics.add
func (m *queueMetrics[T]) addedLocked(item T, now time.Time) {
	m.adds.Inc()
	m.depth.Inc()
	if _, ok := m.addedAt[item]; !ok {
		m.addedAt[item] = now.Sub(m.epoch)
	}
}

// gotLocked records a Get that handed item out.
//
// client-go: util/workqueue/metrics.go defaultQueueMetrics.get
func (m *queueMetrics[T]) gotLocked(item T, now time.Time) {
	m.depth.Dec()
	at := now.Sub(m.epoch)
	m.startedAt[item] = at
	if added, ok := m.addedAt[item]; ok {
		m.latency.Observe((at - added).Seconds())
		delete(m.addedAt, item)
	}
}

// doneLocked records the Done of a processing item.
//
// client-go: util/workqueue/metrics.go defaultQueueMetrics.done
func (m *queueMetrics[T]) doneLocked(item T, now time.Time) {
	if started, ok := m.startedAt[item]; ok {
		m.workDuration.Observe((now.Sub(m.epoch) - started).Seconds())
		delete(m.startedAt, item)
	}
}

// refreshLocked sets the unfinished-work gauge to the summed age of the items in
// processing and the longest-running gauge to the oldest one.
//
// Why a refresher and not Done: these gauges matter most when a worker is stuck, and a
// stuck worker never calls Done.
//
// client-go: util/workqueue/metrics.go defaultQueueMetrics.updateUnfinishedWork
func (m *queueMetrics[T]) refreshLocked(now time.Time) {
	var total, oldest float64
	at := now.Sub(m.epoch)
	for _, started := range m.startedAt {
		age := (at - started).Seconds()
		total += age
		oldest = max(oldest, age)
	}
	m.unfinishedWork.Set(total)
	m.longestRunning.Set(oldest)
}

// startRefresherLocked starts the refresher goroutine the first time it is needed.
//
// Why not in NewQueue: constructors start no goroutines (docs/design.md), and before the
// first Get nothing is processing, so there is nothing to refresh.
func (q *Queue[T]) startRefresherLocked() {
	if q.refresherStarted || q.shuttingDown {
		return
	}
	q.refresherStarted = true
	// Goroutine owner: this Queue. It exits when ShutDown or ShutDownWithDrain closes
	// q.stop, and both wait for it through q.refresher. A queue that is never shut
	// down keeps it running, like client-go's.
	q.refresher.Go(q.refreshLoop)
}

// refreshLoop refreshes the unfinished-work gauges every unfinishedWorkRefreshPeriod
// until q.stop is closed.
//
// client-go: util/workqueue/queue.go Typed.updateUnfinishedWorkLoop
func (q *Queue[T]) refreshLoop() {
	ticker := time.NewTicker(unfinishedWorkRefreshPeriod)
	defer ticker.Stop()
	for {
		select {
		case <-q.stop:
			return
		case now := <-ticker.C:
			q.mu.Lock()
			if !q.shuttingDown {
				q.metrics.refreshLocked(now)
			}
			q.mu.Unlock()
		}
	}
}

// noopMetric stands in for a metric that a provider returned as nil.
type noopMetric struct{}

func (noopMetric) Inc()            {}
func (noopMetric) Dec()            {}
func (noopMetric) Set(float64)     {}
func (noopMetric) Observe(float64) {}

// orNoop returns m, or a metric that drops its values if m is nil.
func orNoop[M any](m M) M {
	if any(m) == nil {
		var n any = noopMetric{}
		return n.(M)
	}
	return m
}
