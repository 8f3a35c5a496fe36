// Package promtext is the smallest Prometheus exposition the examples need: counters,
// gauges and histograms with labels, written in the text format (version 0.0.4) that
// Prometheus scrapes. It lets foo-controller serve /metrics without a metrics
// dependency in this module; promprovider (a module of its own) builds the same
// providers on prometheus/client_golang, which a real program would use.
package promtext

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Registry holds metric families and writes them. It is safe for concurrent use.
type Registry struct {
	mu       sync.Mutex
	families map[string]*family // guarded by mu
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{families: map[string]*family{}} }

// kind is a family's Prometheus type.
type kind string

const (
	counterKind   kind = "counter"
	gaugeKind     kind = "gauge"
	histogramKind kind = "histogram"
)

// family is one metric name: its help, type, label names and series.
type family struct {
	name, help string
	kind       kind
	labels     []string
	buckets    []float64 // histograms only: upper bounds, increasing
	series     map[string]*series
}

// series is one combination of label values.
type series struct {
	values []string
	kind   kind // the family's, never changed
	mu     sync.Mutex
	value  float64  // counter or gauge; a histogram's sum. Guarded by mu.
	counts []uint64 // histogram: one per bucket, not cumulative. Guarded by mu.
	count  uint64   // histogram: observations. Guarded by mu.
	// buckets are the family's (histograms only), shared, never changed.
	buckets []float64
}

// Metric is one series of a family: Inc for counters and gauges, Dec and Set for
// gauges, Observe for histograms. A method that does not fit the family's type does
// nothing: a counter never goes down, and a histogram's sum moves only with an
// observation.
type Metric struct{ s *series }

// Inc adds 1 to a counter or gauge.
func (m Metric) Inc() {
	if m.s.kind == counterKind || m.s.kind == gaugeKind {
		m.add(1)
	}
}

// Dec subtracts 1 from a gauge.
func (m Metric) Dec() {
	if m.s.kind == gaugeKind {
		m.add(-1)
	}
}

func (m Metric) add(d float64) {
	m.s.mu.Lock()
	m.s.value += d
	m.s.mu.Unlock()
}

// Set sets a gauge.
func (m Metric) Set(v float64) {
	if m.s.kind != gaugeKind {
		return
	}
	m.s.mu.Lock()
	m.s.value = v
	m.s.mu.Unlock()
}

// Observe records one observation in a histogram.
func (m Metric) Observe(v float64) {
	if m.s.kind != histogramKind {
		return
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	m.s.count++
	m.s.value += v
	for i, b := range m.s.buckets {
		if v <= b {
			m.s.counts[i]++
			return
		}
	}
}

// Family is a handle on one registered family.
type Family struct {
	r *Registry
	f *family
}

// Counter registers (or returns) the counter family name with the label names.
func (r *Registry) Counter(name, help string, labels ...string) Family {
	return r.register(name, help, counterKind, labels, nil)
}

// Gauge registers (or returns) the gauge family name with the label names.
func (r *Registry) Gauge(name, help string, labels ...string) Family {
	return r.register(name, help, gaugeKind, labels, nil)
}

// Histogram registers (or returns) the histogram family name with buckets (upper
// bounds, increasing; +Inf is implied) and the label names.
func (r *Registry) Histogram(name, help string, buckets []float64, labels ...string) Family {
	return r.register(name, help, histogramKind, labels, buckets)
}

func (r *Registry) register(name, help string, k kind, labels []string, buckets []float64) Family {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.families[name]
	if !ok {
		f = &family{name: name, help: help, kind: k, labels: labels, buckets: buckets, series: map[string]*series{}}
		r.families[name] = f
	}
	return Family{r: r, f: f}
}

// lookup returns the family registered as name, if any.
func (r *Registry) lookup(name string) (Family, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.families[name]
	return Family{r: r, f: f}, ok
}

// With returns the series for the label values (one per label name, in order),
// creating it at zero.
func (f Family) With(values ...string) Metric {
	if len(values) != len(f.f.labels) {
		panic(fmt.Sprintf("promtext: %s has labels %v, got values %v", f.f.name, f.f.labels, values))
	}
	key := strings.Join(values, "\xff")
	f.r.mu.Lock()
	defer f.r.mu.Unlock()
	s, ok := f.f.series[key]
	if !ok {
		s = &series{values: slices.Clone(values), kind: f.f.kind, buckets: f.f.buckets}
		if f.f.kind == histogramKind {
			s.counts = make([]uint64, len(f.f.buckets))
		}
		f.f.series[key] = s
	}
	return Metric{s}
}

// Delete removes the series for the label values (one per label name, in order), if
// there is one, and reports whether there was: it is no longer written. A Metric
// still held for it keeps working but is not written either.
func (f Family) Delete(values ...string) bool {
	key := strings.Join(values, "\xff")
	f.r.mu.Lock()
	defer f.r.mu.Unlock()
	_, ok := f.f.series[key]
	delete(f.f.series, key)
	return ok
}

// WriteTo writes every family, sorted by name, each series sorted by its label
// values, in the Prometheus text format.
func (r *Registry) WriteTo(w io.Writer) (int64, error) {
	r.mu.Lock()
	names := make([]string, 0, len(r.families))
	for n := range r.families {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		f := r.families[n]
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.name, escapeHelp(f.help), f.name, f.kind)
		keys := make([]string, 0, len(f.series))
		for k := range f.series {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			f.write(&b, f.series[k])
		}
	}
	r.mu.Unlock()
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

// write appends one series' sample lines.
func (f *family) write(b *strings.Builder, s *series) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.kind != histogramKind {
		fmt.Fprintf(b, "%s%s %s\n", f.name, labelText(f.labels, s.values, "", ""), number(s.value))
		return
	}
	var cumulative uint64
	for i, bound := range f.buckets {
		cumulative += s.counts[i]
		fmt.Fprintf(b, "%s_bucket%s %d\n", f.name, labelText(f.labels, s.values, "le", number(bound)), cumulative)
	}
	fmt.Fprintf(b, "%s_bucket%s %d\n", f.name, labelText(f.labels, s.values, "le", "+Inf"), s.count)
	fmt.Fprintf(b, "%s_sum%s %s\n", f.name, labelText(f.labels, s.values, "", ""), number(s.value))
	fmt.Fprintf(b, "%s_count%s %d\n", f.name, labelText(f.labels, s.values, "", ""), s.count)
}

// labelText is {a="x",b="y"} (and extra="value" when extra is set), or "" with no
// labels.
func labelText(names, values []string, extra, extraValue string) string {
	if len(names) == 0 && extra == "" {
		return ""
	}
	var parts []string
	for i, n := range names {
		parts = append(parts, n+`="`+escapeValue(values[i])+`"`)
	}
	if extra != "" {
		parts = append(parts, extra+`="`+extraValue+`"`)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// number formats a sample value as Prometheus reads it.
func number(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var (
	valueEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func escapeValue(v string) string { return valueEscaper.Replace(v) }
func escapeHelp(h string) string  { return helpEscaper.Replace(h) }
