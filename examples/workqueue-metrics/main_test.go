package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
