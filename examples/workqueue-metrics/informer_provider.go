package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/reflector"
)

// informerProvider is an informer.MetricsProvider (the reflector's metrics included)
// that records into Prometheus collectors under the names the library exports. One
// provider serves any number of informers: each informer's name is the "name" label;
// the per-handler metrics add "handler", relists "reason", watch events "type". A
// removed handler's series are deleted.
//
// component-base: metrics/prometheus/clientgo/fifo/metrics.go informerMetricsProvider
type informerProvider struct {
	counters   map[string]*prometheus.CounterVec
	gauges     map[string]*prometheus.GaugeVec
	histograms map[string]*prometheus.HistogramVec
}

var _ informer.MetricsProvider = (*informerProvider)(nil)

// Buckets: client-go's for processing latency; a list or a watch lasts up to the
// server's 10-minute watch timeout; objects per list or watch.
var (
	processingBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	longBuckets       = []float64{0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600}
	itemBuckets       = []float64{0, 1, 10, 100, 1000, 10000, 100000}
)

// newInformerProvider creates the collectors and registers them on reg (see
// newPrometheusProvider for why the registry is the caller's).
func newInformerProvider(reg prometheus.Registerer) (*informerProvider, error) {
	p := &informerProvider{
		counters: map[string]*prometheus.CounterVec{}, gauges: map[string]*prometheus.GaugeVec{},
		histograms: map[string]*prometheus.HistogramVec{},
	}
	counter := func(name, help string, labels ...string) {
		p.counters[name] = prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	gauge := func(name, help string, labels ...string) {
		p.gauges[name] = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	}
	histogram := func(name, help string, buckets []float64, labels ...string) {
		p.histograms[name] = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	}
	counter(reflector.ListsMetricName, "Lists (LIST or watch-list) that replaced the cache.", "name")
	histogram(reflector.ListDurationMetricName, "Seconds from a list's request to its last object.", longBuckets, "name")
	histogram(reflector.ItemsInListMetricName, "Objects per list.", itemBuckets, "name")
	counter(reflector.WatchesMetricName, "Watches the server opened, a watch-list's stream included.", "name")
	counter(reflector.ShortWatchesMetricName, "Watches that ended within a second with no event.", "name")
	histogram(reflector.WatchDurationMetricName, "Seconds from a watch's request to its end.", longBuckets, "name")
	histogram(reflector.ItemsInWatchMetricName, "Events per watch, bookmarks excluded.", itemBuckets, "name")
	gauge(reflector.LastResourceVersionMetricName, "The reflector's last synced resourceVersion (its last 15 digits).", "name")
	counter(reflector.RelistsMetricName, "Fetches of the whole state after the first, by reason.", "name", "reason")
	counter(reflector.WatchEventsMetricName, "Watch events, by type.", "name", "type")
	gauge(reflector.LastEventTimeMetricName, "Unix time of the last watch event or bookmark.", "name")
	gauge(reflector.WatchOpenMetricName, "1 while a watch stream is open, 0 while none is.", "name")
	gauge(informer.QueuedItemsMetricName, "Number of items currently queued in the FIFO.", "name")
	histogram(informer.ProcessingLatencyMetricName, "Time taken to process events after popping from the queue.", processingBuckets, "name")
	gauge(informer.StoreResourceVersionMetricName, "The 15 least significant digits of the resource version of the store.", "name")
	gauge(informer.HandlerBacklogMetricName, "Notifications waiting in the handler's buffer.", "name", "handler")
	gauge(informer.HandlerHighWaterMetricName, "The largest backlog the handler's buffer has held.", "name", "handler")
	histogram(informer.HandlerDurationMetricName, "Seconds per handler call.", processingBuckets, "name", "handler")
	counter(informer.HandlerPanicsMetricName, "Panics recovered from the handler's calls.", "name", "handler")
	for _, c := range p.counters {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	for _, g := range p.gauges {
		if err := reg.Register(g); err != nil {
			return nil, err
		}
	}
	for _, h := range p.histograms {
		if err := reg.Register(h); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// labeled is one informer's series of a counter with a second label.
type labeled struct {
	vec  *prometheus.CounterVec
	name string
}

func (l labeled) Inc(value string) { l.vec.WithLabelValues(l.name, value).Inc() }

func (p *informerProvider) NewListsMetric(name string) reflector.CounterMetric {
	return p.counters[reflector.ListsMetricName].WithLabelValues(name)
}

func (p *informerProvider) NewListDurationMetric(name string) reflector.SummaryMetric {
	return p.histograms[reflector.ListDurationMetricName].WithLabelValues(name)
}

func (p *informerProvider) NewItemsInListMetric(name string) reflector.SummaryMetric {
	return p.histograms[reflector.ItemsInListMetricName].WithLabelValues(name)
}

func (p *informerProvider) NewWatchesMetric(name string) reflector.CounterMetric {
	return p.counters[reflector.WatchesMetricName].WithLabelValues(name)
}

func (p *informerProvider) NewShortWatchesMetric(name string) reflector.CounterMetric {
	return p.counters[reflector.ShortWatchesMetricName].WithLabelValues(name)
}

func (p *informerProvider) NewWatchDurationMetric(name string) reflector.SummaryMetric {
	return p.histograms[reflector.WatchDurationMetricName].WithLabelValues(name)
}

func (p *informerProvider) NewItemsInWatchMetric(name string) reflector.SummaryMetric {
	return p.histograms[reflector.ItemsInWatchMetricName].WithLabelValues(name)
}

func (p *informerProvider) NewLastResourceVersionMetric(name string) reflector.GaugeMetric {
	return p.gauges[reflector.LastResourceVersionMetricName].WithLabelValues(name)
}

func (p *informerProvider) NewRelistsMetric(name string) reflector.LabeledCounterMetric {
	return labeled{p.counters[reflector.RelistsMetricName], name}
}

func (p *informerProvider) NewWatchEventsMetric(name string) reflector.LabeledCounterMetric {
	return labeled{p.counters[reflector.WatchEventsMetricName], name}
}

func (p *informerProvider) NewLastEventTimeMetric(name string) reflector.GaugeMetric {
	return p.gauges[reflector.LastEventTimeMetricName].WithLabelValues(name)
}

func (p *informerProvider) NewWatchOpenMetric(name string) reflector.GaugeMetric {
	return p.gauges[reflector.WatchOpenMetricName].WithLabelValues(name)
}

func (p *informerProvider) NewQueuedItemsMetric(name string) informer.GaugeMetric {
	return p.gauges[informer.QueuedItemsMetricName].WithLabelValues(name)
}

func (p *informerProvider) NewProcessingLatencyMetric(name string) informer.HistogramMetric {
	return p.histograms[informer.ProcessingLatencyMetricName].WithLabelValues(name)
}

func (p *informerProvider) NewStoreResourceVersionMetric(name string) informer.GaugeMetric {
	return p.gauges[informer.StoreResourceVersionMetricName].WithLabelValues(name)
}

func (p *informerProvider) NewHandlerBacklogMetric(name, handler string) informer.GaugeMetric {
	return p.gauges[informer.HandlerBacklogMetricName].WithLabelValues(name, handler)
}

func (p *informerProvider) NewHandlerHighWaterMetric(name, handler string) informer.GaugeMetric {
	return p.gauges[informer.HandlerHighWaterMetricName].WithLabelValues(name, handler)
}

func (p *informerProvider) NewHandlerDurationMetric(name, handler string) informer.HistogramMetric {
	return p.histograms[informer.HandlerDurationMetricName].WithLabelValues(name, handler)
}

func (p *informerProvider) NewHandlerPanicsMetric(name, handler string) informer.CounterMetric {
	return p.counters[informer.HandlerPanicsMetricName].WithLabelValues(name, handler)
}

// DeleteHandlerMetrics deletes the removed handler's series from the four per-handler
// vectors, so that the scrape no longer shows them.
func (p *informerProvider) DeleteHandlerMetrics(name, handler string) {
	p.gauges[informer.HandlerBacklogMetricName].DeleteLabelValues(name, handler)
	p.gauges[informer.HandlerHighWaterMetricName].DeleteLabelValues(name, handler)
	p.histograms[informer.HandlerDurationMetricName].DeleteLabelValues(name, handler)
	p.counters[informer.HandlerPanicsMetricName].DeleteLabelValues(name, handler)
}
