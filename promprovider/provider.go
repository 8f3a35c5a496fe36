package promprovider

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/leaderelection"
	"github.com/kubeinternals/informers/workqueue"
)

// Buckets, in seconds and in objects.
var (
	// queueBuckets are client-go's for the workqueue: 10ns to 10s, one per power of ten.
	queueBuckets = prometheus.ExponentialBuckets(10e-9, 10, 10)
	// processingBuckets are client-go's for informer_processing_latency_seconds.
	processingBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	// longBuckets cover a list or a watch: milliseconds to the server's 10-minute
	// watch timeout.
	longBuckets = []float64{0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600}
	// itemBuckets count objects.
	itemBuckets = []float64{0, 1, 10, 100, 1000, 10000, 100000}
	// renewBuckets cover a Lease renewal: a few milliseconds to the default
	// RenewDeadline, 10s.
	renewBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
)

// Provider creates the library's metrics in collectors registered on one registry. One
// Provider serves any number of queues, informers and elections; it is safe for
// concurrent use (the collectors are).
type Provider struct {
	counters   map[string]*prometheus.CounterVec
	gauges     map[string]*prometheus.GaugeVec
	histograms map[string]*prometheus.HistogramVec
}

var (
	_ workqueue.MetricsProvider      = (*Provider)(nil)
	_ informer.MetricsProvider       = (*Provider)(nil)
	_ leaderelection.MetricsProvider = (*Provider)(nil)
)

// New creates every collector and registers it on reg. It fails if reg already holds a
// collector of the same name (a second New on one registry, for instance).
//
// Why reg is a parameter: client-go's adapters register on a global registry from a
// package init, and install themselves with a SetProvider that only the first caller
// wins — a second library doing the same silently gets no metrics. Here the program
// decides where the metrics go, and a conflict is an error it sees.
func New(reg prometheus.Registerer) (*Provider, error) {
	p := &Provider{
		counters:   map[string]*prometheus.CounterVec{},
		gauges:     map[string]*prometheus.GaugeVec{},
		histograms: map[string]*prometheus.HistogramVec{},
	}
	for _, m := range definitions() {
		var c prometheus.Collector
		switch m.kind {
		case counter:
			v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: m.name, Help: m.help}, m.labels)
			p.counters[m.name], c = v, v
		case gauge:
			v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: m.name, Help: m.help}, m.labels)
			p.gauges[m.name], c = v, v
		case histogram:
			v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: m.name, Help: m.help, Buckets: m.buckets}, m.labels)
			p.histograms[m.name], c = v, v
		}
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("promprovider: registering %s: %w", m.name, err)
		}
	}
	return p, nil
}

type kind int

const (
	counter kind = iota
	gauge
	histogram
)

// definition is one metric: its name, type, help text, labels and buckets.
type definition struct {
	name    string
	kind    kind
	help    string
	labels  []string
	buckets []float64
}

// definitions lists every metric the library exports, by package.
func definitions() []definition {
	var all []definition
	for _, part := range [][]definition{workqueueMetrics(), reflectorMetrics(), informerMetrics(), electionMetrics()} {
		all = append(all, part...)
	}
	return all
}

// labeled is one series family of a counter with a second label: Inc(value) counts
// under (name, value).
type labeled struct {
	vec  *prometheus.CounterVec
	name string
}

func (l labeled) Inc(value string) { l.vec.WithLabelValues(l.name, value).Inc() }

var (
	byName    = []string{"name"}
	byHandler = []string{"name", "handler"}
)
