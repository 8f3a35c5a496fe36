package promprovider

import "github.com/kubeinternals/informers/reflector"

func (p *Provider) NewListsMetric(name string) reflector.CounterMetric {
	return p.counters[reflector.ListsMetricName].WithLabelValues(name)
}

func (p *Provider) NewListDurationMetric(name string) reflector.SummaryMetric {
	return p.histograms[reflector.ListDurationMetricName].WithLabelValues(name)
}

func (p *Provider) NewItemsInListMetric(name string) reflector.SummaryMetric {
	return p.histograms[reflector.ItemsInListMetricName].WithLabelValues(name)
}

func (p *Provider) NewWatchesMetric(name string) reflector.CounterMetric {
	return p.counters[reflector.WatchesMetricName].WithLabelValues(name)
}

func (p *Provider) NewShortWatchesMetric(name string) reflector.CounterMetric {
	return p.counters[reflector.ShortWatchesMetricName].WithLabelValues(name)
}

func (p *Provider) NewWatchDurationMetric(name string) reflector.SummaryMetric {
	return p.histograms[reflector.WatchDurationMetricName].WithLabelValues(name)
}

func (p *Provider) NewItemsInWatchMetric(name string) reflector.SummaryMetric {
	return p.histograms[reflector.ItemsInWatchMetricName].WithLabelValues(name)
}

func (p *Provider) NewLastResourceVersionMetric(name string) reflector.GaugeMetric {
	return p.gauges[reflector.LastResourceVersionMetricName].WithLabelValues(name)
}

func (p *Provider) NewRelistsMetric(name string) reflector.LabeledCounterMetric {
	return labeled{p.counters[reflector.RelistsMetricName], name}
}

func (p *Provider) NewWatchEventsMetric(name string) reflector.LabeledCounterMetric {
	return labeled{p.counters[reflector.WatchEventsMetricName], name}
}

func (p *Provider) NewLastEventTimeMetric(name string) reflector.GaugeMetric {
	return p.gauges[reflector.LastEventTimeMetricName].WithLabelValues(name)
}

func (p *Provider) NewWatchOpenMetric(name string) reflector.GaugeMetric {
	return p.gauges[reflector.WatchOpenMetricName].WithLabelValues(name)
}
