package promprovider

import "github.com/kubeinternals/informers/leaderelection"

func (p *Provider) NewLeaderMetric(name string) leaderelection.GaugeMetric {
	return p.gauges[leaderelection.LeaderMetricName].WithLabelValues(name)
}

func (p *Provider) NewSlowpathMetric(name string) leaderelection.CounterMetric {
	return p.counters[leaderelection.SlowpathMetricName].WithLabelValues(name)
}

func (p *Provider) NewLeaseTransitionsMetric(name string) leaderelection.GaugeMetric {
	return p.gauges[leaderelection.LeaseTransitionsMetricName].WithLabelValues(name)
}

func (p *Provider) NewRenewDurationMetric(name string) leaderelection.SummaryMetric {
	return p.histograms[leaderelection.RenewDurationMetricName].WithLabelValues(name)
}

func (p *Provider) NewGateRejectionsMetric(name string) leaderelection.CounterMetric {
	return p.counters[leaderelection.GateRejectionsMetricName].WithLabelValues(name)
}
