package promtext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/internal/metricstext"
)

// DeleteHandlerMetrics takes the handler's four series out of the exposition; another
// handler's stay.
func TestTheProviderDeletesARemovedHandlersSeries(t *testing.T) {
	r := NewRegistry()
	p := NewProvider(r)
	for _, h := range []string{"gone", "kept"} {
		p.NewHandlerBacklogMetric("cms", h).Set(1)
		p.NewHandlerHighWaterMetric("cms", h).Set(2)
		p.NewHandlerDurationMetric("cms", h).Observe(0.5)
		p.NewHandlerPanicsMetric("cms", h).Inc()
	}
	p.DeleteHandlerMetrics("cms", "gone")

	var b strings.Builder
	_, err := r.WriteTo(&b)
	require.NoError(t, err)
	assert.NotContains(t, b.String(), `handler="gone"`)
	got, err := metricstext.Parse(strings.NewReader(b.String()))
	require.NoError(t, err)
	assert.Equal(t, 1.0, got[`informer_handler_backlog{name="cms",handler="kept"}`])
	assert.Equal(t, 2.0, got[`informer_handler_backlog_high_water{name="cms",handler="kept"}`])
	assert.Equal(t, 1.0, got[`informer_handler_duration_seconds_count{name="cms",handler="kept"}`])
	assert.Equal(t, 1.0, got[`informer_handler_panics_total{name="cms",handler="kept"}`])
}
