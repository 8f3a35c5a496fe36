package promprovider

import "github.com/kubeinternals/informers/informer"

// informerMetrics are the informer's three of client-go's and its four per handler.
//
// component-base: metrics/prometheus/clientgo/fifo/metrics.go (client-go's three)
func informerMetrics() []definition {
	return []definition{
		{informer.QueuedItemsMetricName, gauge, "Number of items currently queued in the FIFO.", byName, nil},
		{informer.ProcessingLatencyMetricName, histogram, "Time taken to process events after popping from the queue.", byName, processingBuckets},
		{informer.StoreResourceVersionMetricName, gauge, "The 15 least significant digits of the resource version of the store.", byName, nil},
		{informer.HandlerBacklogMetricName, gauge, "Notifications waiting in the handler's buffer.", byHandler, nil},
		{informer.HandlerHighWaterMetricName, gauge, "The largest backlog the handler's buffer has held.", byHandler, nil},
		{informer.HandlerDurationMetricName, histogram, "Seconds per handler call.", byHandler, processingBuckets},
		{informer.HandlerPanicsMetricName, counter, "Panics recovered from the handler's calls.", byHandler, nil},
	}
}

func (p *Provider) NewQueuedItemsMetric(name string) informer.GaugeMetric {
	return p.gauges[informer.QueuedItemsMetricName].WithLabelValues(name)
}

func (p *Provider) NewProcessingLatencyMetric(name string) informer.HistogramMetric {
	return p.histograms[informer.ProcessingLatencyMetricName].WithLabelValues(name)
}

func (p *Provider) NewStoreResourceVersionMetric(name string) informer.GaugeMetric {
	return p.gauges[informer.StoreResourceVersionMetricName].WithLabelValues(name)
}

func (p *Provider) NewHandlerBacklogMetric(name, handler string) informer.GaugeMetric {
	return p.gauges[informer.HandlerBacklogMetricName].WithLabelValues(name, handler)
}

func (p *Provider) NewHandlerHighWaterMetric(name, handler string) informer.GaugeMetric {
	return p.gauges[informer.HandlerHighWaterMetricName].WithLabelValues(name, handler)
}

func (p *Provider) NewHandlerDurationMetric(name, handler string) informer.HistogramMetric {
	return p.histograms[informer.HandlerDurationMetricName].WithLabelValues(name, handler)
}

func (p *Provider) NewHandlerPanicsMetric(name, handler string) informer.CounterMetric {
	return p.counters[informer.HandlerPanicsMetricName].WithLabelValues(name, handler)
}

// DeleteHandlerMetrics deletes the removed handler's series from the four per-handler
// vectors, so that the scrape no longer shows them.
func (p *Provider) DeleteHandlerMetrics(name, handler string) {
	p.gauges[informer.HandlerBacklogMetricName].DeleteLabelValues(name, handler)
	p.gauges[informer.HandlerHighWaterMetricName].DeleteLabelValues(name, handler)
	p.histograms[informer.HandlerDurationMetricName].DeleteLabelValues(name, handler)
	p.counters[informer.HandlerPanicsMetricName].DeleteLabelValues(name, handler)
}
