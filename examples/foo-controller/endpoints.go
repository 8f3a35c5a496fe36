package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/kubeinternals/informers/examples/internal/promtext"
)

// serve listens on addr and serves mux until ctx ends, logging what under the
// address it got (so ":0" can be used). It returns once listening, or with the
// listen error; the server stops, with a short grace period, when ctx ends.
func serve(ctx context.Context, log *slog.Logger, what, addr string, mux *http.ServeMux) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	log.Info("serving "+what, "addr", ln.Addr().String())
	// Goroutine owned by main: the server; Serve returns when Shutdown below runs.
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("serving "+what+" failed", "err", err)
		}
	}()
	// Runs once ctx ends: stop accepting and let requests in flight finish.
	context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	})
	return nil
}

// metricsMux serves reg on /metrics in the Prometheus text format.
func metricsMux(reg *promtext.Registry) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = reg.WriteTo(w)
	})
	return mux
}

// liveness is /healthz's check: healthy (the Controller's Healthy) and, unless
// stuckAfter is 0 or negative, watches (the Controller's WatchesHealthy) with
// stuckAfter; both errors, joined, when both fail.
func liveness(healthy func() error, watches func(stuckAfter time.Duration) error, stuckAfter time.Duration) func() error {
	if stuckAfter <= 0 {
		return healthy
	}
	return func() error { return errors.Join(healthy(), watches(stuckAfter)) }
}

// probesMux serves /healthz (healthy returns nil: the process answers, with leader
// election a leader renews its Lease, and no informer's watch is stuck; see liveness)
// and /readyz (ready reports true), controller-runtime's conventions: a failing
// liveness probe restarts the pod, a failing readiness probe only takes it out of
// Services.
func probesMux(ready func() bool, healthy func() error) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if err := healthy(); err != nil {
			http.Error(w, "unhealthy: "+err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready() {
			http.Error(w, "not ready: the caches have not synced, or the controller is shutting down", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}
