package promprovider

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/leaderelection"
	"github.com/kubeinternals/informers/metricdefs"
	"github.com/kubeinternals/informers/workqueue"
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

// New creates a collector for every metric package metricdefs describes — its name,
// type, help, labels and buckets — and registers it on reg. It fails if reg already
// holds a collector of the same name (a second New on one registry, for instance).
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
	for _, d := range metricdefs.All() {
		var c prometheus.Collector
		switch d.Kind {
		case metricdefs.Counter:
			v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: d.Name, Help: d.Help}, d.Labels)
			p.counters[d.Name], c = v, v
		case metricdefs.Gauge:
			v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: d.Name, Help: d.Help}, d.Labels)
			p.gauges[d.Name], c = v, v
		case metricdefs.Histogram:
			v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: d.Name, Help: d.Help, Buckets: d.Buckets}, d.Labels)
			p.histograms[d.Name], c = v, v
		}
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("promprovider: registering %s: %w", d.Name, err)
		}
	}
	return p, nil
}

// labeled is one series family of a counter with a second label: Inc(value) counts
// under (name, value).
type labeled struct {
	vec  *prometheus.CounterVec
	name string
}

func (l labeled) Inc(value string) { l.vec.WithLabelValues(l.name, value).Inc() }
