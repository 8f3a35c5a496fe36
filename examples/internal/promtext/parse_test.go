package promtext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/internal/metricstext"
)

func TestParseReadsBackWhatWriteToWrote(t *testing.T) {
	r := NewRegistry()
	r.Counter("things_total", "Things.", "name").With("a").Inc()
	r.Gauge("level", "A level.", "name").With("b").Set(2.5)
	h := r.Histogram("took_seconds", "Durations.", []float64{1}, "name").With("x")
	h.Observe(0.5)
	h.Observe(3)
	var b strings.Builder
	_, err := r.WriteTo(&b)
	require.NoError(t, err)

	got, err := metricstext.Parse(strings.NewReader(b.String()))
	require.NoError(t, err)
	assert.Equal(t, 1.0, got[`things_total{name="a"}`])
	assert.Equal(t, 2.5, got[`level{name="b"}`])
	assert.Equal(t, 2.0, got[`took_seconds_count{name="x"}`])
	assert.Equal(t, 3.5, got[`took_seconds_sum{name="x"}`])
	assert.Equal(t, 1.0, got[`took_seconds_bucket{name="x",le="1"}`])
}
