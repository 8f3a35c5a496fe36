package promprovider

import "github.com/kubeinternals/informers/workqueue"

func (p *Provider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return p.gauges[workqueue.DepthMetricName].WithLabelValues(name)
}

func (p *Provider) NewAddsMetric(name string) workqueue.CounterMetric {
	return p.counters[workqueue.AddsMetricName].WithLabelValues(name)
}

func (p *Provider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return p.histograms[workqueue.QueueDurationMetricName].WithLabelValues(name)
}

func (p *Provider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return p.histograms[workqueue.WorkDurationMetricName].WithLabelValues(name)
}

func (p *Provider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.gauges[workqueue.UnfinishedWorkMetricName].WithLabelValues(name)
}

func (p *Provider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.gauges[workqueue.LongestRunningProcessorMetricName].WithLabelValues(name)
}

func (p *Provider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return p.counters[workqueue.RetriesMetricName].WithLabelValues(name)
}
