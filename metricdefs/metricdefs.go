// Package metricdefs describes, once, every metric the library's stages export: its
// name, type, help text, labels and (for a histogram) buckets. The stages only name
// their metrics (workqueue.DepthMetricName, reflector.RelistsMetricName, …) and take a
// provider of small interfaces; a provider for a metrics library — promprovider on
// prometheus/client_golang, foo-controller's text exporter, one of your own on
// OpenTelemetry — builds its collectors from these descriptions, so that every
// provider publishes the same metric the same way.
//
// Every metric has the label "name" first: the queue's, informer's or reflector's
// name, or the election's. The per-handler metrics add "handler", the reflector's
// relists "reason" and its watch events "type".
package metricdefs

import (
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/leaderelection"
	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/workqueue"
)

// Kind is a metric's type.
type Kind int

const (
	Counter Kind = iota
	Gauge
	Histogram
)

// Def describes one metric.
type Def struct {
	Name    string
	Kind    Kind
	Help    string
	Labels  []string
	Buckets []float64 // a Histogram's upper bounds, increasing; nil for the others
}

// Buckets, in seconds and in objects.
var (
	// queueBuckets are client-go's for the workqueue: 10ns to 10s, one per power of ten.
	queueBuckets = []float64{1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10}
	// processingBuckets are client-go's for informer_processing_latency_seconds.
	processingBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	// longBuckets cover a list or a watch: milliseconds to the server's 10-minute
	// watch timeout.
	longBuckets = []float64{0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600}
	// itemBuckets count objects.
	itemBuckets = []float64{0, 1, 10, 100, 1000, 10000, 100000}
	// renewBuckets cover a Lease renewal: a few milliseconds to the default
	// RenewDeadline, 10s.
	renewBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
)

var (
	byName    = []string{"name"}
	byHandler = []string{"name", "handler"}
)

// all is every metric, by package: the workqueue's seven (client-go's names and
// buckets), the reflector's, the informer's (the first three are client-go's) and the
// leader election's (the first two are client-go's).
//
// component-base: metrics/prometheus/workqueue/metrics.go, metrics/prometheus/clientgo
var all = []Def{
	{workqueue.DepthMetricName, Gauge, "Current depth of workqueue: items added and not yet handed to a worker.", byName, nil},
	{workqueue.AddsMetricName, Counter, "Total number of adds handled by workqueue (deduplicated adds excluded).", byName, nil},
	{workqueue.QueueDurationMetricName, Histogram, "How long in seconds an item stays in workqueue before being requested.", byName, queueBuckets},
	{workqueue.WorkDurationMetricName, Histogram, "How long in seconds processing an item from workqueue takes.", byName, queueBuckets},
	{workqueue.UnfinishedWorkMetricName, Gauge, "Seconds of work in progress not yet observed by work_duration; a steady climb means stuck workers.", byName, nil},
	{workqueue.LongestRunningProcessorMetricName, Gauge, "How many seconds the longest running processor for workqueue has been running.", byName, nil},
	{workqueue.RetriesMetricName, Counter, "Total number of retries handled by workqueue.", byName, nil},

	{reflector.ListsMetricName, Counter, "Lists (LIST or watch-list) that replaced the cache.", byName, nil},
	{reflector.ListDurationMetricName, Histogram, "Seconds from a list's request to its last object.", byName, longBuckets},
	{reflector.ItemsInListMetricName, Histogram, "Objects per list.", byName, itemBuckets},
	{reflector.WatchesMetricName, Counter, "Watches the server opened, a watch-list's stream included.", byName, nil},
	{reflector.ShortWatchesMetricName, Counter, "Watches that ended within a second with no event.", byName, nil},
	{reflector.WatchDurationMetricName, Histogram, "Seconds from a watch's request to its end.", byName, longBuckets},
	{reflector.ItemsInWatchMetricName, Histogram, "Events per watch, bookmarks excluded.", byName, itemBuckets},
	{reflector.LastResourceVersionMetricName, Gauge, "The reflector's last synced resourceVersion (its last 15 digits).", byName, nil},
	{reflector.RelistsMetricName, Counter, "Fetches of the whole state after the first, by reason.", []string{"name", "reason"}, nil},
	{reflector.WatchEventsMetricName, Counter, "Watch events, by type.", []string{"name", "type"}, nil},
	{reflector.LastEventTimeMetricName, Gauge, "Unix time of the last watch event or bookmark.", byName, nil},
	{reflector.WatchOpenMetricName, Gauge, "1 while a watch stream is open, 0 while none is.", byName, nil},

	{informer.QueuedItemsMetricName, Gauge, "Number of items currently queued in the FIFO.", byName, nil},
	{informer.ProcessingLatencyMetricName, Histogram, "Time taken to process events after popping from the queue.", byName, processingBuckets},
	{informer.StoreResourceVersionMetricName, Gauge, "The 15 least significant digits of the resource version of the store.", byName, nil},
	{informer.ShardDroppedMetricName, Counter, "Objects dropped by a sharded informer for being outside its shard.", byName, nil},
	{informer.ShardClientFilteringMetricName, Gauge, "1 while a sharded informer filters its shard on the client: the apiserver did not apply ShardSelector.", byName, nil},
	{informer.HandlerBacklogMetricName, Gauge, "Notifications waiting in the handler's buffer.", byHandler, nil},
	{informer.HandlerHighWaterMetricName, Gauge, "The largest backlog the handler's buffer has held.", byHandler, nil},
	{informer.HandlerDurationMetricName, Histogram, "Seconds per handler call.", byHandler, processingBuckets},
	{informer.HandlerPanicsMetricName, Counter, "Panics recovered from the handler's calls.", byHandler, nil},

	{leaderelection.LeaderMetricName, Gauge, "1 while this process leads the election named name, 0 otherwise.", byName, nil},
	{leaderelection.SlowpathMetricName, Counter, "Renewals that had to read the Lease before writing it (the fast path failed or had expired).", byName, nil},
	{leaderelection.LeaseTransitionsMetricName, Gauge, "The Lease's leaseTransitions as last seen: how many times it changed hands.", byName, nil},
	{leaderelection.RenewDurationMetricName, Histogram, "Seconds from sending a successful renewal to its answer.", byName, renewBuckets},
	{leaderelection.GateRejectionsMetricName, Counter, "Writes the write gate refused or cancelled: sent while not leading.", byName, nil},
}

// index finds a Def by name.
var index = func() map[string]int {
	m := make(map[string]int, len(all))
	for i, d := range all {
		m[d.Name] = i
	}
	return m
}()

// All returns every metric's description, in a fixed order (the workqueue's, the
// reflector's, the informer's, the election's). The slice is the caller's.
func All() []Def { return append([]Def(nil), all...) }

// Get returns the description of the metric named name, and false if the library has
// no such metric.
func Get(name string) (Def, bool) {
	i, ok := index[name]
	if !ok {
		return Def{}, false
	}
	return all[i], true
}
