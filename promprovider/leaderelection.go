package promprovider

import "github.com/kubeinternals/informers/leaderelection"

// electionMetrics are the leader election's: client-go's two and three more.
//
// component-base: metrics/prometheus/clientgo/leaderelection/metrics.go (client-go's two)
func electionMetrics() []definition {
	return []definition{
		{leaderelection.LeaderMetricName, gauge, "1 while this process leads the election named name, 0 otherwise.", byName, nil},
		{leaderelection.SlowpathMetricName, counter, "Renewals that had to read the Lease before writing it (the fast path failed or had expired).", byName, nil},
		{leaderelection.LeaseTransitionsMetricName, gauge, "The Lease's leaseTransitions as last seen: how many times it changed hands.", byName, nil},
		{leaderelection.RenewDurationMetricName, histogram, "Seconds from sending a successful renewal to its answer.", byName, renewBuckets},
		{leaderelection.GateRejectionsMetricName, counter, "Writes the write gate refused or cancelled: sent while not leading.", byName, nil},
	}
}

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
