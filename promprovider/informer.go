package promprovider

import "github.com/kubeinternals/informers/informer"

func (p *Provider) NewQueuedItemsMetric(name string) informer.GaugeMetric {
	return p.gauges[informer.QueuedItemsMetricName].WithLabelValues(name)
}

func (p *Provider) NewProcessingLatencyMetric(name string) informer.HistogramMetric {
	return p.histograms[informer.ProcessingLatencyMetricName].WithLabelValues(name)
}

func (p *Provider) NewStoreResourceVersionMetric(name string) informer.GaugeMetric {
	return p.gauges[informer.StoreResourceVersionMetricName].WithLabelValues(name)
}

func (p *Provider) NewShardDroppedMetric(name string) informer.CounterMetric {
	return p.counters[informer.ShardDroppedMetricName].WithLabelValues(name)
}

func (p *Provider) NewShardClientFilteringMetric(name string) informer.GaugeMetric {
	return p.gauges[informer.ShardClientFilteringMetricName].WithLabelValues(name)
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
