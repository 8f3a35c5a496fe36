package promtext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/internal/metricstext"
)

func TestTheTextFormat(t *testing.T) {
	r := NewRegistry()
	c := r.Counter("things_total", "Things.\nTwo lines.", "name")
	c.With("b").Inc()
	c.With("a").Inc()
	c.With("a").Inc()
	r.Gauge("level", "A level.", "name", "handler").With(`q"uote`, "h").Set(2.5)
	h := r.Histogram("took_seconds", "Durations.", []float64{0.1, 1}, "name").With("x")
	h.Observe(0.05)
	h.Observe(0.5)
	h.Observe(7)
	r.Gauge("bare", "No labels.").With().Set(1)

	var b strings.Builder
	_, err := r.WriteTo(&b)
	require.NoError(t, err)
	assert.Equal(t, `# HELP bare No labels.
# TYPE bare gauge
bare 1
# HELP level A level.
# TYPE level gauge
level{name="q\"uote",handler="h"} 2.5
# HELP things_total Things.\nTwo lines.
# TYPE things_total counter
things_total{name="a"} 2
things_total{name="b"} 1
# HELP took_seconds Durations.
# TYPE took_seconds histogram
took_seconds_bucket{name="x",le="0.1"} 1
took_seconds_bucket{name="x",le="1"} 2
took_seconds_bucket{name="x",le="+Inf"} 3
took_seconds_sum{name="x"} 7.55
took_seconds_count{name="x"} 3
`, b.String())
}

func TestRegisteringAFamilyTwiceReturnsTheSameSeries(t *testing.T) {
	r := NewRegistry()
	r.Counter("c_total", "C.", "name").With("a").Inc()
	r.Counter("c_total", "C.", "name").With("a").Inc()
	var b strings.Builder
	_, _ = r.WriteTo(&b)
	assert.Contains(t, b.String(), `c_total{name="a"} 2`)
}

// A call that does not fit the series' type changes nothing: Inc is for counters and
// gauges, Dec and Set for gauges, Observe for histograms.
func TestAMethodThatDoesNotFitTheTypeDoesNothing(t *testing.T) {
	r := NewRegistry()
	c := r.Counter("c_total", "C.", "name").With("a")
	c.Inc()
	c.Dec()
	c.Set(10)
	c.Observe(3)
	g := r.Gauge("g", "G.", "name").With("a")
	g.Set(5)
	g.Inc()
	g.Dec()
	g.Dec()
	g.Observe(3)
	h := r.Histogram("h_seconds", "H.", []float64{1}, "name").With("a")
	h.Observe(0.5)
	h.Inc()
	h.Dec()
	h.Set(10)

	var b strings.Builder
	_, err := r.WriteTo(&b)
	require.NoError(t, err)
	got, err := metricstext.Parse(strings.NewReader(b.String()))
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{
		`c_total{name="a"}`:                    1,
		`g{name="a"}`:                          4,
		`h_seconds_bucket{name="a",le="1"}`:    1,
		`h_seconds_bucket{name="a",le="+Inf"}`: 1,
		`h_seconds_sum{name="a"}`:              0.5,
		`h_seconds_count{name="a"}`:            1,
	}, got)
}
