// Command workqueue-metrics runs a small rate-limited work queue with two workers and
// serves its metrics on /metrics in the Prometheus text format, under client-go's metric
// names (workqueue_depth, workqueue_adds_total, …). It needs no cluster. Run it and
// scrape it:
//
//	cd examples/workqueue-metrics && go run . -addr 127.0.0.1:8080 &
//	curl -s 127.0.0.1:8080/metrics | grep '^workqueue_'
//
// The point is the wiring: a MetricsProvider built on prometheus/client_golang (package
// promprovider, a module of this repository), given to one queue through workqueue.Options and registered on a registry the program owns —
// no global provider, no package init, nothing registered behind the program's back.
// See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/promprovider"
	"github.com/kubeinternals/informers/workqueue"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to serve /metrics on")
	duration := flag.Duration("duration", 0, "stop after this long; 0 runs until SIGINT/SIGTERM")
	logLevel := flag.String("log-level", "info", "log level: debug, info, warn or error")
	logFormat := flag.String("log-format", "text", "log format: text or json")
	flag.Parse()

	log, err := kube.NewLogger(os.Stderr, *logLevel, *logFormat)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := kube.SignalContext(context.Background())
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Error("cannot listen", "addr", *addr, "err", err)
		os.Exit(1)
	}
	if err := run(ctx, lis, log); err != nil {
		log.Error("workqueue-metrics failed", "err", err)
		os.Exit(1)
	}
}

// run serves /metrics on lis and runs the demo queue until ctx ends. It closes lis.
func run(ctx context.Context, lis net.Listener, log *slog.Logger) error {
	reg := prometheus.NewRegistry()
	provider, err := promprovider.New(reg)
	if err != nil {
		_ = lis.Close()
		return err
	}
	q := workqueue.NewRateLimitingQueue(workqueue.RateLimitingOptions[string]{
		Options: workqueue.Options{Name: "demo", MetricsProvider: provider, Logger: log},
	})

	srv := &http.Server{
		Handler:           metricsMux(reg),
		ReadHeaderTimeout: 5 * time.Second,
	}
	log.Info("serving metrics", "url", "http://"+lis.Addr().String()+"/metrics")

	var wg sync.WaitGroup
	// Goroutine owner: run. The server exits when Shutdown is called below.
	wg.Go(func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "err", err)
		}
	})
	// Goroutine owner: run. Both workers exit when the queue is shut down below.
	for id := range 2 {
		wg.Go(func() { worker(q, id, log) })
	}
	produce(ctx, q) // until ctx ends

	log.Info("shutting down: draining the workers")
	drainCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.ShutDownWithDrain(drainCtx); err != nil {
		log.Warn("drain incomplete", "err", err)
	}
	if err := srv.Shutdown(drainCtx); err != nil {
		log.Warn("metrics server shutdown", "err", err)
	}
	wg.Wait()
	return nil
}

// metricsMux serves the registry's metrics on /metrics.
func metricsMux(reg *prometheus.Registry) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	return mux
}

// produce plays the informer's event handlers: every 20ms it enqueues one of 20 keys,
// so some Adds find their key already waiting and are deduplicated.
func produce(ctx context.Context, q workqueue.Interface[string]) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			q.Add(fmt.Sprintf("default/object-%d", rand.IntN(20)))
		}
	}
}

// worker plays a controller's worker: it "reconciles" for a few milliseconds, fails one
// time in four, and retries a failing key up to five times with the queue's backoff.
func worker(q workqueue.RateLimitingInterface[string], id int, log *slog.Logger) {
	for {
		key, shutdown := q.Get()
		if shutdown {
			return
		}
		time.Sleep(time.Duration(5+rand.IntN(50)) * time.Millisecond) // the "work"
		switch {
		case rand.IntN(4) != 0:
			q.Forget(key)
		case q.NumRequeues(key) < 5:
			log.Debug("reconcile failed, retrying", "worker", id, "key", key, "retries", q.NumRequeues(key))
			q.AddRateLimited(key)
		default:
			log.Info("giving up on key", "worker", id, "key", key)
			q.Forget(key)
		}
		q.Done(key)
	}
}
