package promprovider

import "github.com/kubeinternals/informers/workqueue"

// workqueueMetrics are the workqueue's seven, under client-go's names and buckets.
//
// component-base: metrics/prometheus/workqueue/metrics.go prometheusMetricsProvider
func workqueueMetrics() []definition {
	return []definition{
		{workqueue.DepthMetricName, gauge, "Current depth of workqueue: items added and not yet handed to a worker.", byName, nil},
		{workqueue.AddsMetricName, counter, "Total number of adds handled by workqueue (deduplicated adds excluded).", byName, nil},
		{workqueue.QueueDurationMetricName, histogram, "How long in seconds an item stays in workqueue before being requested.", byName, queueBuckets},
		{workqueue.WorkDurationMetricName, histogram, "How long in seconds processing an item from workqueue takes.", byName, queueBuckets},
		{workqueue.UnfinishedWorkMetricName, gauge, "Seconds of work in progress not yet observed by work_duration; a steady climb means stuck workers.", byName, nil},
		{workqueue.LongestRunningProcessorMetricName, gauge, "How many seconds the longest running processor for workqueue has been running.", byName, nil},
		{workqueue.RetriesMetricName, counter, "Total number of retries handled by workqueue.", byName, nil},
	}
}

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
