package promtext

import (
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/leaderelection"
	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/workqueue"
)

// Buckets, in seconds and in objects.
var (
	// processingBuckets are client-go's for informer_processing_latency_seconds.
	processingBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	// queueBuckets are client-go's for the workqueue: 10ns to 10s, one per power of ten.
	queueBuckets = []float64{1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10}
	// longBuckets cover a list or a watch: milliseconds to the server's 10-minute
	// watch timeout.
	longBuckets = []float64{0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600}
	// itemBuckets count objects.
	itemBuckets = []float64{0, 1, 10, 100, 1000, 10000, 100000}
	// renewBuckets cover a Lease renewal: a few milliseconds to the default
	// RenewDeadline, 10s.
	renewBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
)

// Provider creates every metric of the library's informers, reflectors and workqueues
// in a Registry, under the names the library exports (informer.QueuedItemsMetricName,
// reflector.ListsMetricName, workqueue.DepthMetricName, …), each labelled "name" (and
// "handler", "reason" or "type" where the metric has a second label). One Provider
// serves any number of informers, queues and elections. A removed handler's series are
// deleted.
type Provider struct{ r *Registry }

var (
	_ informer.MetricsProvider       = Provider{}
	_ workqueue.MetricsProvider      = Provider{}
	_ leaderelection.MetricsProvider = Provider{}
)

// NewProvider returns a provider that registers into r.
func NewProvider(r *Registry) Provider { return Provider{r} }

func (p Provider) counter(metric, help, name string) Metric {
	return p.r.Counter(metric, help, "name").With(name)
}

func (p Provider) gauge(metric, help, name string) Metric {
	return p.r.Gauge(metric, help, "name").With(name)
}

func (p Provider) histogram(metric, help string, buckets []float64, name string) Metric {
	return p.r.Histogram(metric, help, buckets, "name").With(name)
}

// labeled is a counter family with a second label, for reflector.LabeledCounterMetric.
type labeled struct {
	f    Family
	name string
}

func (l labeled) Inc(value string) { l.f.With(l.name, value).Inc() }

// The reflector's metrics.

func (p Provider) NewListsMetric(name string) reflector.CounterMetric {
	return p.counter(reflector.ListsMetricName, "Lists (LIST or watch-list) that replaced the cache.", name)
}

func (p Provider) NewListDurationMetric(name string) reflector.SummaryMetric {
	return p.histogram(reflector.ListDurationMetricName, "Seconds from a list's request to its last object.", longBuckets, name)
}

func (p Provider) NewItemsInListMetric(name string) reflector.SummaryMetric {
	return p.histogram(reflector.ItemsInListMetricName, "Objects per list.", itemBuckets, name)
}

func (p Provider) NewWatchesMetric(name string) reflector.CounterMetric {
	return p.counter(reflector.WatchesMetricName, "Watches the server opened, a watch-list's stream included.", name)
}

func (p Provider) NewShortWatchesMetric(name string) reflector.CounterMetric {
	return p.counter(reflector.ShortWatchesMetricName, "Watches that ended within a second with no event.", name)
}

func (p Provider) NewWatchDurationMetric(name string) reflector.SummaryMetric {
	return p.histogram(reflector.WatchDurationMetricName, "Seconds from a watch's request to its end.", longBuckets, name)
}

func (p Provider) NewItemsInWatchMetric(name string) reflector.SummaryMetric {
	return p.histogram(reflector.ItemsInWatchMetricName, "Events per watch, bookmarks excluded.", itemBuckets, name)
}

func (p Provider) NewLastResourceVersionMetric(name string) reflector.GaugeMetric {
	return p.gauge(reflector.LastResourceVersionMetricName, "The reflector's last synced resourceVersion (its last 15 digits).", name)
}

func (p Provider) NewRelistsMetric(name string) reflector.LabeledCounterMetric {
	return labeled{p.r.Counter(reflector.RelistsMetricName, "Fetches of the whole state after the first, by reason.", "name", "reason"), name}
}

func (p Provider) NewWatchEventsMetric(name string) reflector.LabeledCounterMetric {
	return labeled{p.r.Counter(reflector.WatchEventsMetricName, "Watch events, by type.", "name", "type"), name}
}

func (p Provider) NewLastEventTimeMetric(name string) reflector.GaugeMetric {
	return p.gauge(reflector.LastEventTimeMetricName, "Unix time of the last watch event or bookmark.", name)
}

func (p Provider) NewWatchOpenMetric(name string) reflector.GaugeMetric {
	return p.gauge(reflector.WatchOpenMetricName, "1 while a watch stream is open, 0 while none is.", name)
}

// The informer's metrics.

func (p Provider) NewQueuedItemsMetric(name string) informer.GaugeMetric {
	return p.gauge(informer.QueuedItemsMetricName, "Number of items currently queued in the FIFO.", name)
}

func (p Provider) NewProcessingLatencyMetric(name string) informer.HistogramMetric {
	return p.histogram(informer.ProcessingLatencyMetricName, "Time taken to process events after popping from the queue.", processingBuckets, name)
}

func (p Provider) NewStoreResourceVersionMetric(name string) informer.GaugeMetric {
	return p.gauge(informer.StoreResourceVersionMetricName, "The 15 least significant digits of the resource version of the store.", name)
}

func (p Provider) handler(metric, help, name, handler string) Metric {
	return p.r.Gauge(metric, help, "name", "handler").With(name, handler)
}

func (p Provider) NewHandlerBacklogMetric(name, handler string) informer.GaugeMetric {
	return p.handler(informer.HandlerBacklogMetricName, "Notifications waiting in the handler's buffer.", name, handler)
}

func (p Provider) NewHandlerHighWaterMetric(name, handler string) informer.GaugeMetric {
	return p.handler(informer.HandlerHighWaterMetricName, "The largest backlog the handler's buffer has held.", name, handler)
}

func (p Provider) NewHandlerDurationMetric(name, handler string) informer.HistogramMetric {
	return p.r.Histogram(informer.HandlerDurationMetricName, "Seconds per handler call.", processingBuckets, "name", "handler").With(name, handler)
}

func (p Provider) NewHandlerPanicsMetric(name, handler string) informer.CounterMetric {
	return p.r.Counter(informer.HandlerPanicsMetricName, "Panics recovered from the handler's calls.", "name", "handler").With(name, handler)
}

// DeleteHandlerMetrics deletes the removed handler's four series.
func (p Provider) DeleteHandlerMetrics(name, handler string) {
	for _, metric := range []string{informer.HandlerBacklogMetricName, informer.HandlerHighWaterMetricName,
		informer.HandlerDurationMetricName, informer.HandlerPanicsMetricName} {
		if f, ok := p.r.lookup(metric); ok {
			f.Delete(name, handler)
		}
	}
}

// The workqueue's metrics.

func (p Provider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return p.gauge(workqueue.DepthMetricName, "Current depth of workqueue: items added and not yet handed to a worker.", name)
}

func (p Provider) NewAddsMetric(name string) workqueue.CounterMetric {
	return p.counter(workqueue.AddsMetricName, "Total number of adds handled by workqueue (deduplicated adds excluded).", name)
}

func (p Provider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return p.histogram(workqueue.QueueDurationMetricName, "How long in seconds an item stays in workqueue before being requested.", queueBuckets, name)
}

func (p Provider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return p.histogram(workqueue.WorkDurationMetricName, "How long in seconds processing an item from workqueue takes.", queueBuckets, name)
}

func (p Provider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.gauge(workqueue.UnfinishedWorkMetricName, "Seconds of work in progress not yet observed by work_duration.", name)
}

func (p Provider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.gauge(workqueue.LongestRunningProcessorMetricName, "How many seconds the longest running processor for workqueue has been running.", name)
}

func (p Provider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return p.counter(workqueue.RetriesMetricName, "Total number of retries handled by workqueue.", name)
}

// The leader election's metrics.

func (p Provider) NewLeaderMetric(name string) leaderelection.GaugeMetric {
	return p.gauge(leaderelection.LeaderMetricName, "1 while this process leads the election named name, 0 otherwise.", name)
}

func (p Provider) NewSlowpathMetric(name string) leaderelection.CounterMetric {
	return p.counter(leaderelection.SlowpathMetricName, "Renewals that had to read the Lease before writing it (the fast path failed or had expired).", name)
}

func (p Provider) NewLeaseTransitionsMetric(name string) leaderelection.GaugeMetric {
	return p.gauge(leaderelection.LeaseTransitionsMetricName, "The Lease's leaseTransitions as last seen: how many times it changed hands.", name)
}

func (p Provider) NewRenewDurationMetric(name string) leaderelection.SummaryMetric {
	return p.histogram(leaderelection.RenewDurationMetricName, "Seconds from sending a successful renewal to its answer.", renewBuckets, name)
}

func (p Provider) NewGateRejectionsMetric(name string) leaderelection.CounterMetric {
	return p.counter(leaderelection.GateRejectionsMetricName, "Writes the leader election's write gate refused or cancelled: sent while not leading.", name)
}
