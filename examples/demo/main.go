// Command demo is `make demo`: it shows the project's control plane working. Without
// $KUBECONFIG it starts the embedded local cluster (internal/testenv's Cluster profile)
// and stops it at the end; with $KUBECONFIG set (e.g. kind) it uses that cluster. It
// lists the nodes, creates a Deployment, waits until it is Available, deletes it and
// waits until garbage collection has removed its ReplicaSet — narrating each step — and
// exits 0 only if every step was observed.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubeinternals/informers/internal/testenv"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(ctx, log); err != nil {
		log.Error("demo failed", "err", err)
		os.Exit(1)
	}
	log.Info("demo finished: every step was observed")
}

func run(ctx context.Context, log *slog.Logger) error {
	cfg, cleanup, err := clusterConfig(ctx, log)
	if err != nil {
		return err
	}
	defer cleanup()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	return deploymentTour(ctx, log, cfg)
}

// clusterConfig returns the cluster in $KUBECONFIG, or starts the embedded one.
func clusterConfig(ctx context.Context, log *slog.Logger) (*rest.Config, func(), error) {
	if path := os.Getenv("KUBECONFIG"); path != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			return nil, nil, fmt.Errorf("loading $KUBECONFIG %s: %w", path, err)
		}
		log.Info("step 0: using the cluster in $KUBECONFIG", "server", cfg.Host)
		return cfg, func() {}, nil
	}
	log.Info("step 0: starting the embedded local cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok)")
	start := time.Now()
	env, err := testenv.Launch(ctx, testenv.Options{Profile: testenv.Cluster})
	if err != nil {
		return nil, nil, err
	}
	log.Info("local cluster ready", "after", time.Since(start).Round(time.Millisecond), "server", env.Config.Host)
	return env.Config, func() {
		log.Info("stopping the embedded local cluster")
		env.Stop()
	}, nil
}
