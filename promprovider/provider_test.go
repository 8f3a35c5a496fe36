package promprovider

import (
	"bytes"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/metricdefs"
	"github.com/kubeinternals/informers/workqueue"
)

// scrape returns what the registry exposes, in the Prometheus text format.
func scrape(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		require.NoError(t, enc.Encode(f))
	}
	return b.String()
}

func TestTheWorkqueueMetricsHaveClientGosNames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		p, err := New(reg)
		require.NoError(t, err)
		q := workqueue.NewRateLimitingQueue(workqueue.RateLimitingOptions[string]{
			Options: workqueue.Options{Name: "demo", MetricsProvider: p},
		})
		q.Add("a")
		q.Add("a") // deduplicated: not an add
		q.Add("b")
		a, _ := q.Get()
		time.Sleep(2 * time.Second) // fake clock: a is processing for 2s
		synctest.Wait()
		q.Done(a)
		q.AddRateLimited("c")

		out := scrape(t, reg)
		for _, line := range []string{
			`workqueue_depth{name="demo"} 1`,
			`workqueue_adds_total{name="demo"} 2`,
			`workqueue_queue_duration_seconds_count{name="demo"} 1`,
			`workqueue_work_duration_seconds_sum{name="demo"} 2`,
			`workqueue_unfinished_work_seconds{name="demo"} 2`,
			`workqueue_longest_running_processor_seconds{name="demo"} 2`,
			`workqueue_retries_total{name="demo"} 1`,
			`workqueue_work_duration_seconds_bucket{name="demo",le="1e-08"} 0`, // client-go's first bucket
		} {
			assert.Contains(t, out, line+"\n")
		}
		q.ShutDown()
	})
}

func TestQueuesShareAProviderUnderTheirOwnNames(t *testing.T) {
	reg := prometheus.NewRegistry()
	p, err := New(reg)
	require.NoError(t, err)
	for _, name := range []string{"foos", "bars"} {
		q := workqueue.NewQueue[string](workqueue.Options{Name: name, MetricsProvider: p})
		q.Add("x")
		q.ShutDown()
	}
	out := scrape(t, reg)
	assert.Contains(t, out, `workqueue_adds_total{name="foos"} 1`)
	assert.Contains(t, out, `workqueue_adds_total{name="bars"} 1`)
}

func TestNothingIsRegisteredGloballyAndASecondNewOnOneRegistryFails(t *testing.T) {
	reg := prometheus.NewRegistry()
	_, err := New(reg)
	require.NoError(t, err)
	families, err := prometheus.DefaultGatherer.Gather()
	require.NoError(t, err)
	for _, f := range families {
		for _, d := range metricdefs.All() {
			assert.NotEqual(t, d.Name, f.GetName(), "on the global registry")
		}
	}
	_, err = New(reg)
	require.Error(t, err, "registering the same metrics twice on one registry is an error the program sees")
	assert.Contains(t, err.Error(), "promprovider: registering workqueue_depth")
}

// Every metric metricdefs describes is registered, as it describes it.
func TestNewRegistersEveryDescribedMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	p, err := New(reg)
	require.NoError(t, err)
	for _, d := range metricdefs.All() {
		values := make([]string, len(d.Labels))
		switch d.Kind {
		case metricdefs.Counter:
			p.counters[d.Name].WithLabelValues(values...).Inc()
		case metricdefs.Gauge:
			p.gauges[d.Name].WithLabelValues(values...).Set(1)
		case metricdefs.Histogram:
			p.histograms[d.Name].WithLabelValues(values...).Observe(1)
		}
	}
	families, err := reg.Gather()
	require.NoError(t, err)
	help := map[string]string{}
	for _, f := range families {
		help[f.GetName()] = f.GetHelp()
	}
	for _, d := range metricdefs.All() {
		assert.Equal(t, d.Help, help[d.Name], d.Name)
	}
	assert.Len(t, help, len(metricdefs.All()))
}
