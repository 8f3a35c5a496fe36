// Command demo is `make demo`: foo-controller at work on a real cluster. Without
// $KUBECONFIG it starts the embedded local cluster (internal/testrig/testenv's Cluster profile:
// etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok with a fake node)
// and stops it at the end; with $KUBECONFIG set (e.g. kind) it uses that cluster.
//
// It installs the Foo CRD, runs foo-controller in this process, creates a Foo, shows the
// Deployment the controller creates and status.availableReplicas reaching the requested
// replicas, scales the Foo, deletes it and shows garbage collection removing the
// Deployment — narrating each step — on client-go 1.37's pipeline (RealFIFO fed by a
// watch-list); then it creates the Foo again on the classic pipeline (DeltaFIFO fed by
// a paged LIST) to show the same journey through both. It exits 0 only if every step
// was observed.
// Nothing is left running: the controller stops first, then the cluster.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/cluster"
	"github.com/kubeinternals/informers/examples/internal/kube"
)

func main() {
	record := flag.String("record", "", "write each controller's trace to DIR (demo.jsonl.gz, demo-classic.jsonl.gz), recordings the explorer replays")
	flag.Parse()
	ctx, stop := kube.SignalContext(context.Background())
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	// Why: a component given no Logger logs through slog.Default(); this way its lines
	// read like the rest of this program's.
	slog.SetDefault(log)
	if err := run(ctx, log, *record); err != nil {
		log.Error("demo failed", "err", err)
		stop()
		os.Exit(1)
	}
	log.Info("demo finished: every step was observed")
}

func run(ctx context.Context, log *slog.Logger, record string) error {
	cfg, cleanup, err := clusterConfig(ctx, log)
	if err != nil {
		return err
	}
	defer cleanup()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if record != "" {
		if err := os.MkdirAll(record, 0o755); err != nil {
			return fmt.Errorf("-record: %w", err)
		}
	}
	return fooTour(ctx, log, os.Stdout, cfg, record)
}

// clusterConfig returns the cluster in $KUBECONFIG, or starts the embedded one; cleanup
// stops what it started.
func clusterConfig(ctx context.Context, log *slog.Logger) (*rest.Config, func(), error) {
	log.Info("step 0: a cluster to run on")
	c, err := cluster.Start(ctx, cluster.Options{Logger: log})
	if err != nil {
		return nil, nil, fmt.Errorf("step 0: %w", err)
	}
	return c.Direct, func() {
		if c.Local {
			log.Info("stopping the embedded local cluster")
		}
		c.Stop()
	}, nil
}
