// Package informermetrics is a recording informer.MetricsProvider for tests: the
// informer's metrics tests and the parity suite's exceptions read what an informer
// handed its provider. (It is apart from testmetrics because the reflector's own
// tests use testmetrics, and this package imports the informer, which imports the
// reflector.)
package informermetrics

import (
	"strings"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/testmetrics"
	"github.com/kubeinternals/informers/reflector"
)

// Recorder is an informer.MetricsProvider (and so a reflector.MetricsProvider) that
// records every value of every metric under "metric{labels}": "queued{name}",
// "backlog{name,handler}", "relists{name}{reason}" for a labeled counter.
type Recorder struct{ testmetrics.Recorder }

func (r *Recorder) M(metric string, labels ...string) testmetrics.Metric {
	return r.Metric(metric + "{" + strings.Join(labels, ",") + "}")
}
func (r *Recorder) L(metric, name string) testmetrics.Labeled {
	return r.Labeled(metric + "{" + name + "}")
}

func (r *Recorder) NewListsMetric(n string) reflector.CounterMetric { return r.M("lists", n) }
func (r *Recorder) NewListDurationMetric(n string) reflector.SummaryMetric {
	return r.M("list_duration", n)
}
func (r *Recorder) NewItemsInListMetric(n string) reflector.SummaryMetric {
	return r.M("items_in_list", n)
}
func (r *Recorder) NewWatchesMetric(n string) reflector.CounterMetric {
	return r.M("watches", n)
}
func (r *Recorder) NewShortWatchesMetric(n string) reflector.CounterMetric {
	return r.M("short_watches", n)
}
func (r *Recorder) NewWatchDurationMetric(n string) reflector.SummaryMetric {
	return r.M("watch_duration", n)
}
func (r *Recorder) NewItemsInWatchMetric(n string) reflector.SummaryMetric {
	return r.M("items_in_watch", n)
}
func (r *Recorder) NewLastResourceVersionMetric(n string) reflector.GaugeMetric {
	return r.M("last_rv", n)
}
func (r *Recorder) NewRelistsMetric(n string) reflector.LabeledCounterMetric {
	return r.L("relists", n)
}
func (r *Recorder) NewWatchEventsMetric(n string) reflector.LabeledCounterMetric {
	return r.L("watch_events", n)
}
func (r *Recorder) NewLastEventTimeMetric(n string) reflector.GaugeMetric {
	return r.M("last_event_time", n)
}
func (r *Recorder) NewWatchOpenMetric(n string) reflector.GaugeMetric {
	return r.M("watch_open", n)
}
func (r *Recorder) NewQueuedItemsMetric(n string) informer.GaugeMetric {
	return r.M("queued", n)
}
func (r *Recorder) NewProcessingLatencyMetric(n string) informer.HistogramMetric {
	return r.M("processing", n)
}
func (r *Recorder) NewStoreResourceVersionMetric(n string) informer.GaugeMetric {
	return r.M("store_rv", n)
}
func (r *Recorder) NewShardDroppedMetric(n string) informer.CounterMetric {
	return r.M("shard_dropped", n)
}
func (r *Recorder) NewShardClientFilteringMetric(n string) informer.GaugeMetric {
	return r.M("shard_client_filtering", n)
}
func (r *Recorder) NewHandlerBacklogMetric(n, h string) informer.GaugeMetric {
	return r.M("backlog", n, h)
}
func (r *Recorder) NewHandlerHighWaterMetric(n, h string) informer.GaugeMetric {
	return r.M("high_water", n, h)
}
func (r *Recorder) NewHandlerDurationMetric(n, h string) informer.HistogramMetric {
	return r.M("handler_duration", n, h)
}
func (r *Recorder) NewHandlerPanicsMetric(n, h string) informer.CounterMetric {
	return r.M("panics", n, h)
}

// DeleteHandlerMetrics records the deletion as 1 under deleted{name,handler}.
func (r *Recorder) DeleteHandlerMetrics(n, h string) { r.M("deleted", n, h).Inc() }
