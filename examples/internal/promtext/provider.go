package promtext

import (
	"fmt"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/leaderelection"
	"github.com/kubeinternals/informers/metricdefs"
	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/workqueue"
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

// family registers (or returns) the family of the library's metric name, as
// metricdefs describes it.
func (p Provider) family(name string) Family {
	d, ok := metricdefs.Get(name)
	if !ok {
		panic(fmt.Sprintf("promtext: %s is not a metric of the library (metricdefs)", name))
	}
	switch d.Kind {
	case metricdefs.Counter:
		return p.r.Counter(d.Name, d.Help, d.Labels...)
	case metricdefs.Gauge:
		return p.r.Gauge(d.Name, d.Help, d.Labels...)
	default:
		return p.r.Histogram(d.Name, d.Help, d.Buckets, d.Labels...)
	}
}

// labeled is a counter family with a second label, for reflector.LabeledCounterMetric.
type labeled struct {
	f    Family
	name string
}

func (l labeled) Inc(value string) { l.f.With(l.name, value).Inc() }

// The reflector's metrics.

func (p Provider) NewListsMetric(name string) reflector.CounterMetric {
	return p.family(reflector.ListsMetricName).With(name)
}

func (p Provider) NewListDurationMetric(name string) reflector.SummaryMetric {
	return p.family(reflector.ListDurationMetricName).With(name)
}

func (p Provider) NewItemsInListMetric(name string) reflector.SummaryMetric {
	return p.family(reflector.ItemsInListMetricName).With(name)
}

func (p Provider) NewWatchesMetric(name string) reflector.CounterMetric {
	return p.family(reflector.WatchesMetricName).With(name)
}

func (p Provider) NewShortWatchesMetric(name string) reflector.CounterMetric {
	return p.family(reflector.ShortWatchesMetricName).With(name)
}

func (p Provider) NewWatchDurationMetric(name string) reflector.SummaryMetric {
	return p.family(reflector.WatchDurationMetricName).With(name)
}

func (p Provider) NewItemsInWatchMetric(name string) reflector.SummaryMetric {
	return p.family(reflector.ItemsInWatchMetricName).With(name)
}

func (p Provider) NewLastResourceVersionMetric(name string) reflector.GaugeMetric {
	return p.family(reflector.LastResourceVersionMetricName).With(name)
}

func (p Provider) NewRelistsMetric(name string) reflector.LabeledCounterMetric {
	return labeled{p.family(reflector.RelistsMetricName), name}
}

func (p Provider) NewWatchEventsMetric(name string) reflector.LabeledCounterMetric {
	return labeled{p.family(reflector.WatchEventsMetricName), name}
}

func (p Provider) NewLastEventTimeMetric(name string) reflector.GaugeMetric {
	return p.family(reflector.LastEventTimeMetricName).With(name)
}

func (p Provider) NewWatchOpenMetric(name string) reflector.GaugeMetric {
	return p.family(reflector.WatchOpenMetricName).With(name)
}

// The informer's metrics.

func (p Provider) NewQueuedItemsMetric(name string) informer.GaugeMetric {
	return p.family(informer.QueuedItemsMetricName).With(name)
}

func (p Provider) NewProcessingLatencyMetric(name string) informer.HistogramMetric {
	return p.family(informer.ProcessingLatencyMetricName).With(name)
}

func (p Provider) NewStoreResourceVersionMetric(name string) informer.GaugeMetric {
	return p.family(informer.StoreResourceVersionMetricName).With(name)
}

func (p Provider) NewShardDroppedMetric(name string) informer.CounterMetric {
	return p.family(informer.ShardDroppedMetricName).With(name)
}

func (p Provider) NewShardClientFilteringMetric(name string) informer.GaugeMetric {
	return p.family(informer.ShardClientFilteringMetricName).With(name)
}

func (p Provider) NewHandlerBacklogMetric(name, handler string) informer.GaugeMetric {
	return p.family(informer.HandlerBacklogMetricName).With(name, handler)
}

func (p Provider) NewHandlerHighWaterMetric(name, handler string) informer.GaugeMetric {
	return p.family(informer.HandlerHighWaterMetricName).With(name, handler)
}

func (p Provider) NewHandlerDurationMetric(name, handler string) informer.HistogramMetric {
	return p.family(informer.HandlerDurationMetricName).With(name, handler)
}

func (p Provider) NewHandlerPanicsMetric(name, handler string) informer.CounterMetric {
	return p.family(informer.HandlerPanicsMetricName).With(name, handler)
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
	return p.family(workqueue.DepthMetricName).With(name)
}

func (p Provider) NewAddsMetric(name string) workqueue.CounterMetric {
	return p.family(workqueue.AddsMetricName).With(name)
}

func (p Provider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return p.family(workqueue.QueueDurationMetricName).With(name)
}

func (p Provider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return p.family(workqueue.WorkDurationMetricName).With(name)
}

func (p Provider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.family(workqueue.UnfinishedWorkMetricName).With(name)
}

func (p Provider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.family(workqueue.LongestRunningProcessorMetricName).With(name)
}

func (p Provider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return p.family(workqueue.RetriesMetricName).With(name)
}

// The leader election's metrics.

func (p Provider) NewLeaderMetric(name string) leaderelection.GaugeMetric {
	return p.family(leaderelection.LeaderMetricName).With(name)
}

func (p Provider) NewSlowpathMetric(name string) leaderelection.CounterMetric {
	return p.family(leaderelection.SlowpathMetricName).With(name)
}

func (p Provider) NewLeaseTransitionsMetric(name string) leaderelection.GaugeMetric {
	return p.family(leaderelection.LeaseTransitionsMetricName).With(name)
}

func (p Provider) NewRenewDurationMetric(name string) leaderelection.SummaryMetric {
	return p.family(leaderelection.RenewDurationMetricName).With(name)
}

func (p Provider) NewGateRejectionsMetric(name string) leaderelection.CounterMetric {
	return p.family(leaderelection.GateRejectionsMetricName).With(name)
}
