package informer

import (
	"time"

	"github.com/kubeinternals/informers/internal/objects"

	"github.com/kubeinternals/informers/reflector"
)

// The metric interfaces are the reflector's: a provider implements one set.
type (
	// GaugeMetric is a value that is set.
	GaugeMetric = reflector.GaugeMetric
	// CounterMetric is a value that only goes up.
	CounterMetric = reflector.CounterMetric
	// HistogramMetric records observations, in seconds.
	//
	// client-go: tools/cache/reflector_metrics.go HistogramMetric
	HistogramMetric = reflector.SummaryMetric
)

// The names a Prometheus provider should give the metrics, each with the label
// "name" (the informer's), and "handler" for the per-handler ones. The first three
// are client-go's (component-base/metrics/prometheus/clientgo/fifo, which also labels
// group, version and resource); the reflector's are reflector.ListsMetricName and
// its siblings.
const (
	QueuedItemsMetricName          = "informer_queued_items"
	ProcessingLatencyMetricName    = "informer_processing_latency_seconds"
	StoreResourceVersionMetricName = "informer_store_resource_version"
	HandlerBacklogMetricName       = "informer_handler_backlog"
	HandlerHighWaterMetricName     = "informer_handler_backlog_high_water"
	HandlerDurationMetricName      = "informer_handler_duration_seconds"
	HandlerPanicsMetricName        = "informer_handler_panics_total"
	ShardDroppedMetricName         = "informer_shard_dropped_objects_total"
	ShardClientFilteringMetricName = "informer_shard_client_filtering"
)

// MetricsProvider creates the metrics of one informer and of its reflector (the
// embedded reflector.MetricsProvider, called with the same name); name is the
// informer's Options.Name (a Factory informer's: its resource), or its Go type.
// Per-handler metrics are created when the handler is added, with the handler's name:
// its HandlerOptions.Name, or for an unnamed handler "<informer> handler <n>" — the
// informer's Options.Name ("informer" when it has none) and n counting the informer's
// registrations from 1, never reused after a removal — the name its log lines and
// trace events carry too. When a handler is removed, DeleteHandlerMetrics deletes its
// series. A method that returns nil gets a metric that drops its values; a nil
// provider costs nothing.
//
// The first three are client-go 1.37's InformerMetricsProvider; the others answer
// what operators ask of a running informer: is a handler falling behind (its backlog
// and high-water mark), how long does it take per call, and has it panicked.
//
// Differences from client-go: one provider per informer, in Options, where client-go
// has one per process (SetInformerMetricsProvider, first call wins) and records only
// for informers given an InformerName; see workqueue.MetricsProvider for why. client-go
// refuses a duplicate InformerName in the process and publishes one informer per name
// and resource; with no process-wide registry, a Factory publishes one informer per
// name among its own (FactoryOptions.MetricsProvider), and informers built directly
// must be given distinct names (Options.MetricsProvider).
//
// client-go: tools/cache/informer_metrics.go InformerMetricsProvider
type MetricsProvider interface {
	reflector.MetricsProvider

	// NewQueuedItemsMetric is the number of items in the informer's queue: keys with
	// pending deltas (DeltaFIFO) or single deltas (RealFIFO), as client-go counts
	// them. The queue sets it under its own lock after every write and every pop
	// (deltafifo's QueuedItems option), so the last value is the length now.
	NewQueuedItemsMetric(name string) GaugeMetric
	// NewProcessingLatencyMetric observes the seconds to apply one popped item (one
	// key's deltas, or a RealFIFO batch) to the cache and hand it to the handlers'
	// buffers.
	NewProcessingLatencyMetric(name string) HistogramMetric
	// NewStoreResourceVersionMetric is the resource version of the last change
	// applied to the cache, as a number (its last 15 digits, as client-go truncates).
	NewStoreResourceVersionMetric(name string) GaugeMetric
	// NewShardDroppedMetric counts the objects a sharded informer (Options.Shard)
	// dropped for being outside its shard: every one the apiserver sent because it
	// did not apply the shard selector. Created only for a sharded informer.
	NewShardDroppedMetric(name string) CounterMetric
	// NewShardClientFilteringMetric is 1 while a sharded informer filters its shard
	// on the client (the apiserver ignored the selector: its feature gate
	// ShardedListAndWatch is off), 0 once the apiserver is seen to filter it.
	// Created only for a sharded informer.
	NewShardClientFilteringMetric(name string) GaugeMetric

	// NewHandlerBacklogMetric is the number of notifications waiting in a handler's
	// buffer.
	NewHandlerBacklogMetric(name, handler string) GaugeMetric
	// NewHandlerHighWaterMetric is the largest backlog a handler's buffer has held.
	NewHandlerHighWaterMetric(name, handler string) GaugeMetric
	// NewHandlerDurationMetric observes the seconds of each call of a handler.
	NewHandlerDurationMetric(name, handler string) HistogramMetric
	// NewHandlerPanicsMetric counts the panics recovered from a handler's calls.
	NewHandlerPanicsMetric(name, handler string) CounterMetric
	// DeleteHandlerMetrics is called once when the handler is removed
	// (RemoveEventHandler), after its goroutine was told to stop: the provider deletes
	// the four per-handler series it created for (name, handler) — a Prometheus
	// provider calls DeleteLabelValues(name, handler) on each vector — so that a
	// process that adds and removes handlers does not export a series for every
	// handler it ever had. A value recorded after the call (a handler call that was
	// still running ends) goes to the deleted series, which is no longer exported.
	DeleteHandlerMetrics(name, handler string)
}

type noopMetric struct{}

func (noopMetric) Inc()            {}
func (noopMetric) Set(float64)     {}
func (noopMetric) Observe(float64) {}

// orNoop returns m, or a metric that drops its values when m is nil. M is one of
// the metric interfaces, all of which noopMetric implements.
func orNoop[M any](m M) M {
	if any(m) == nil {
		return any(noopMetric{}).(M)
	}
	return m
}

// informerMetrics is one informer's metrics; nil when Options.MetricsProvider is.
// Its methods do nothing on a nil receiver.
type informerMetrics struct {
	informer   string // the name the metrics were created with
	queued     GaugeMetric
	processing HistogramMetric
	storeRV    GaugeMetric
}

func newInformerMetrics(p MetricsProvider, name string) *informerMetrics {
	if p == nil {
		return nil
	}
	return &informerMetrics{
		informer:   name,
		queued:     orNoop(p.NewQueuedItemsMetric(name)),
		processing: orNoop(p.NewProcessingLatencyMetric(name)),
		storeRV:    orNoop(p.NewStoreResourceVersionMetric(name)),
	}
}

// name is the informer's name in its metrics ("" without metrics).
func (m *informerMetrics) name() string {
	if m == nil {
		return ""
	}
	return m.informer
}

// queuedItems is the gauge the queue sets to its length, under its lock; nil without
// metrics.
func (m *informerMetrics) queuedItems() GaugeMetric {
	if m == nil {
		return nil
	}
	return m.queued
}

// processed records the seconds since began, when one popped item was applied.
func (m *informerMetrics) processed(began time.Time) {
	if m != nil {
		m.processing.Observe(time.Since(began).Seconds())
	}
}

// applied records the resource version of a change applied to the cache.
func (m *informerMetrics) applied(rv string) {
	if m == nil {
		return
	}
	if v, ok := objects.ResourceVersionMetric(rv); ok {
		m.storeRV.Set(v)
	}
}

// handlerMetrics is one handler's metrics; nil when the informer has no provider.
type handlerMetrics struct {
	backlog, highWater GaugeMetric
	duration           HistogramMetric
	panics             CounterMetric
	// provider, informer and handler: what deleted tells the provider.
	provider          MetricsProvider
	informer, handler string
}

func newHandlerMetrics(p MetricsProvider, name, handler string) *handlerMetrics {
	if p == nil {
		return nil
	}
	return &handlerMetrics{
		provider: p, informer: name, handler: handler,
		backlog:   orNoop(p.NewHandlerBacklogMetric(name, handler)),
		highWater: orNoop(p.NewHandlerHighWaterMetric(name, handler)),
		duration:  orNoop(p.NewHandlerDurationMetric(name, handler)),
		panics:    orNoop(p.NewHandlerPanicsMetric(name, handler)),
	}
}

// deleted tells the provider the handler was removed, so that it deletes the
// handler's series.
func (m *handlerMetrics) deleted() {
	if m != nil {
		m.provider.DeleteHandlerMetrics(m.informer, m.handler)
	}
}
