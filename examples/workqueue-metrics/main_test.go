package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/workqueue"
)

// scrape returns the registry's metrics in the Prometheus text format.
func scrape(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	metricsMux(reg).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	return rec.Body.String()
}

func TestProviderExportsClientGoMetricNames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		p, err := newPrometheusProvider(reg)
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
		} {
			assert.Contains(t, out, line+"\n")
		}
		q.ShutDown()
	})
}

func TestQueuesShareAProviderUnderTheirOwnNames(t *testing.T) {
	reg := prometheus.NewRegistry()
	p, err := newPrometheusProvider(reg)
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

func TestNothingIsRegisteredGlobally(t *testing.T) {
	reg := prometheus.NewRegistry()
	_, err := newPrometheusProvider(reg)
	require.NoError(t, err)
	families, err := prometheus.DefaultGatherer.Gather()
	require.NoError(t, err)
	for _, f := range families {
		assert.False(t, strings.HasPrefix(f.GetName(), "workqueue_"), "%s is on the global registry", f.GetName())
	}
	_, err = newPrometheusProvider(reg)
	assert.Error(t, err, "registering the same metrics twice on one registry must be reported")
}

func TestRunServesMetricsAndStops(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx, lis, slog.New(slog.DiscardHandler)) }()

	// The listener is already open, so this connection waits in its backlog until the
	// server accepts it: no polling needed.
	resp, err := http.Get("http://" + lis.Addr().String() + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Contains(t, string(body), `workqueue_adds_total{name="demo"}`)
	assert.Contains(t, string(body), `workqueue_work_duration_seconds_bucket{name="demo",le="1e-08"}`)

	cancel()
	require.NoError(t, <-done, "run must return once its context ends")
	_, err = http.Get("http://" + lis.Addr().String() + "/metrics")
	assert.Error(t, err, "the server must be shut down")
}
