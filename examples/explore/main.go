//go:build !replayonly

// Command explore is `make explore`: the informer pipeline, live in the browser.
//
// It starts the embedded local cluster (or uses the cluster in $KUBECONFIG), runs
// foo-controller on this library with a tracer attached, and serves one page on
// loopback that draws the pipeline — reflector, queue, indexer, one box per handler,
// workqueue, workers — with each box's live counters, a timeline of trace events that
// follows one object through the boxes, and buttons that change Foos or inject faults
// (cut the watch, compact etcd, restart the apiserver). A control on the page switches
// the controller between client-go 1.37's pipeline (RealFIFO fed by a watch-list) and
// the classic one (DeltaFIFO fed by a paged LIST) and repeats the last action on it.
//
//	go run ./examples/explore                 # prints the URL to open
//	go run ./examples/explore -addr 127.0.0.1:9000
//	go run ./examples/explore -pipeline classic
//	go run ./examples/explore -replay docs/recordings/watch-cut.jsonl.gz
//
// With -replay it starts no cluster and no controller: it serves the same page from a
// recording (docs/recordings/README.md), with a player — play, pause, step, speed, a
// scrubber — instead of the action buttons.
//
// Ctrl-C stops the server, then the controller, then the cluster it started.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/examples/internal/cluster"
	"github.com/kubeinternals/informers/examples/internal/kube"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8077", "where to serve the page: a loopback host:port (port 0 picks a free one)")
	pipeline := flag.String("pipeline", string(controller.DefaultPipeline),
		`the pipeline foo-controller starts on: "default" (RealFIFO fed by a watch-list, as client-go 1.37) or "classic" (DeltaFIFO fed by a paged LIST); the page switches it`)
	replay := flag.String("replay", "", "serve this recording (a .jsonl or .jsonl.gz file) instead of a live controller: no cluster needed")
	flag.Parse()
	ctx, stop := kube.SignalContext(context.Background())
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	// Why: a component given no Logger logs through slog.Default(); this way its lines
	// read like the rest of this program's.
	slog.SetDefault(log)
	runIt := func() error { return run(ctx, log, *addr, *pipeline) }
	if *replay != "" {
		runIt = func() error { return runReplay(ctx, log, *addr, *replay) }
	}
	if err := runIt(); err != nil {
		log.Error("explore failed", "err", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, log *slog.Logger, addr, pipeline string) error {
	// Why check before anything starts: a typo should not cost a cluster's start-up.
	p, err := parsePipeline(pipeline)
	if err != nil {
		return fmt.Errorf("-pipeline: %w", err)
	}
	ln, err := listenLoopback(addr)
	if err != nil {
		return err
	}
	c, err := cluster.Start(ctx, cluster.Options{APIServerFlags: exploreAPIServerFlags, Logger: log})
	if err != nil {
		ln.Close()
		return err
	}
	defer func() {
		if c.Local {
			log.Info("stopping the embedded local cluster")
		}
		c.Stop()
	}()
	x, err := startExplorer(ctx, c, ln, log, p)
	if err != nil {
		return err
	}
	fmt.Printf("\nexplorer ready: open %s\nfoo-controller runs the %s pipeline: %s\n(Ctrl-C stops it and the cluster it started)\n\n", x.URL, p, labelOf(p, 1).Text)
	<-ctx.Done()
	log.Info("shutting down: the server, then the controller")
	return x.Stop()
}
