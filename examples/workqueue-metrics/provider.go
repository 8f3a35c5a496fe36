package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeinternals/informers/workqueue"
)

// prometheusProvider is a workqueue.MetricsProvider that records into Prometheus
// collectors. One provider serves any number of queues: each queue's Options.Name
// becomes the value of the "name" label, as in client-go.
//
// component-base: metrics/prometheus/workqueue/metrics.go prometheusMetricsProvider
type prometheusProvider struct {
	depth          *prometheus.GaugeVec
	adds           *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	workDuration   *prometheus.HistogramVec
	unfinished     *prometheus.GaugeVec
	longestRunning *prometheus.GaugeVec
	retries        *prometheus.CounterVec
}

var _ workqueue.MetricsProvider = (*prometheusProvider)(nil)

// newPrometheusProvider creates the seven collectors and registers them on reg.
//
// Why reg is a parameter: client-go's Prometheus adapter registers on a global registry
// from a package init and installs itself with workqueue.SetProvider, which only the
// first caller wins (a sync.Once) — a second library doing the same silently gets no
// metrics. Here the program decides which registry the metrics go to, and registering
// twice on one registry is an error it sees.
func newPrometheusProvider(reg prometheus.Registerer) (*prometheusProvider, error) {
	label := []string{"name"}
	// The same buckets as client-go: 10ns to 10s, one per power of ten.
	buckets := prometheus.ExponentialBuckets(10e-9, 10, 10)
	p := &prometheusProvider{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: workqueue.DepthMetricName,
			Help: "Current depth of workqueue: items added and not yet handed to a worker.",
		}, label),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: workqueue.AddsMetricName,
			Help: "Total number of adds handled by workqueue (deduplicated adds excluded).",
		}, label),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    workqueue.QueueDurationMetricName,
			Help:    "How long in seconds an item stays in workqueue before being requested.",
			Buckets: buckets,
		}, label),
		workDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    workqueue.WorkDurationMetricName,
			Help:    "How long in seconds processing an item from workqueue takes.",
			Buckets: buckets,
		}, label),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: workqueue.UnfinishedWorkMetricName,
			Help: "Seconds of work in progress not yet observed by work_duration; " +
				"a steady climb means stuck workers.",
		}, label),
		longestRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: workqueue.LongestRunningProcessorMetricName,
			Help: "How many seconds the longest running processor for workqueue has been running.",
		}, label),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: workqueue.RetriesMetricName,
			Help: "Total number of retries handled by workqueue.",
		}, label),
	}
	for _, c := range []prometheus.Collector{p.depth, p.adds, p.latency, p.workDuration, p.unfinished, p.longestRunning, p.retries} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *prometheusProvider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return p.depth.WithLabelValues(name)
}

func (p *prometheusProvider) NewAddsMetric(name string) workqueue.CounterMetric {
	return p.adds.WithLabelValues(name)
}

func (p *prometheusProvider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return p.latency.WithLabelValues(name)
}

func (p *prometheusProvider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return p.workDuration.WithLabelValues(name)
}

func (p *prometheusProvider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.unfinished.WithLabelValues(name)
}

func (p *prometheusProvider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.longestRunning.WithLabelValues(name)
}

func (p *prometheusProvider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return p.retries.WithLabelValues(name)
}
