// Command foo-controller runs sample-controller's Foo → Deployment controller on this
// module's informers and workqueue. Install the CRD first (artifacts/crd.yaml); see
// README.md for running it on kind, out of cluster or in cluster.
//
// SIGINT or SIGTERM stops it gracefully: no new work is taken, the syncs in progress
// finish, then the informers stop. A second signal exits at once.
package main

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"time"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/examples/internal/promtext"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/kubeconfig"
	"github.com/kubeinternals/informers/trace"
)

func main() {
	flags := kube.AddFlags(flag.CommandLine)
	workers := flag.Int("workers", 2, "number of workers syncing Foos in parallel")
	resync := flag.Duration("resync", 30*time.Second, "informer resync period (0 disables)")
	drain := flag.Duration("drain-timeout", 25*time.Second, "on SIGTERM, how long the syncs in progress may take to finish")
	pipeline := flag.String("pipeline", string(controller.DefaultPipeline),
		`informer pipeline: "default" (RealFIFO fed by a watch-list, as client-go 1.37) or "classic" (DeltaFIFO fed by a paged LIST)`)
	metricsAddr := flag.String("metrics-bind-address", "", `serve /metrics (Prometheus text format) on this address, e.g. ":8080"; "" disables`)
	probeAddr := flag.String("health-probe-bind-address", "", `serve /healthz and /readyz on this address, e.g. ":8081"; "" disables`)
	leaderElect := flag.Bool("leader-elect", false, "compete for a Lease with the other replicas; only the holder runs workers")
	leaseNamespace := flag.String("leader-elect-resource-namespace", "", `the Lease's namespace; "" means the pod's (in cluster) or "default"`)
	leaseName := flag.String("leader-elect-resource-name", controller.Name, "the Lease's name")
	leaseDuration := flag.Duration("leader-elect-lease-duration", 15*time.Second, "how long the other replicas wait, after the Lease last changed, before taking over")
	renewDeadline := flag.Duration("leader-elect-renew-deadline", 10*time.Second, "how long the leader tries to renew before it stops working")
	retryPeriod := flag.Duration("leader-elect-retry-period", 2*time.Second, "the pause between two attempts to acquire or renew")
	release := flag.Bool("leader-elect-release-on-cancel", true, "on SIGTERM, release the Lease once the workers finished, so another replica takes over at once")
	watchStuckAfter := flag.Duration("watch-stuck-after", informer.DefaultWatchStuckAfter,
		"/healthz fails when an informer's watch, once synced, has delivered nothing (no event, no bookmark) or been down for longer than this; 0 or negative disables the check")
	record := flag.String("record", "", `write this process's trace to FILE (gzipped if it ends in ".gz"), a recording the explorer replays, its header naming this replica (its Lease identity with -leader-elect, else the hostname); "" disables`)
	flag.Parse()

	log := flags.MustLogger()
	cfg := flags.MustConfig(log)

	if *resync == 0 {
		*resync = -1 // Options: negative disables, 0 means the default
	}
	var election *controller.LeaderElection
	if *leaderElect {
		election = &controller.LeaderElection{
			Namespace: leaseNamespaceOr(log, *leaseNamespace), Name: *leaseName,
			LeaseDuration: *leaseDuration, RenewDeadline: *renewDeadline, RetryPeriod: *retryPeriod,
			ReleaseOnCancel: *release,
		}
	}
	finish := func() {}
	var tracer *trace.Tracer
	if *record != "" {
		var err error
		var logs trace.Sink
		if tracer, logs, finish, err = startRecording(log, *record, replicaName(election), controller.Pipeline(*pipeline), *workers); err != nil {
			log.Error("starting the recording", "err", err)
			os.Exit(1)
		}
		// The recording keeps the log lines this process prints from now on, each at
		// its moment among the trace events.
		log = recordedLogger(log, logs)
	}
	reg := promtext.NewRegistry()
	metrics := promtext.NewProvider(reg)
	c, err := controller.New(cfg, controller.Options{
		Workers: *workers, ResyncPeriod: *resync, DrainTimeout: *drain, Logger: log,
		Pipeline: controller.Pipeline(*pipeline), InformerMetrics: metrics, QueueMetrics: metrics,
		LeaderElection: election, ElectionMetrics: metrics, Tracer: tracer,
	})
	if err != nil {
		log.Error("building the controller", "err", err)
		finish()
		os.Exit(1)
	}
	ctx, stop := kube.SignalContext(context.Background())
	defer stop()
	if *metricsAddr != "" {
		if err := serve(ctx, log, "metrics", *metricsAddr, metricsMux(reg)); err != nil {
			log.Error("serving metrics", "err", err)
			finish()
			os.Exit(1)
		}
	}
	if *probeAddr != "" {
		if err := serve(ctx, log, "health probes", *probeAddr, probesMux(c.Ready, liveness(c.Healthy, c.WatchesHealthy, *watchStuckAfter))); err != nil {
			log.Error("serving health probes", "err", err)
			finish()
			os.Exit(1)
		}
	}
	err = c.Run(ctx)
	finish()
	if err != nil {
		log.Error("controller failed", "err", err)
		stop()
		os.Exit(1)
	}
	log.Info("stopped cleanly")
}

// leaseNamespaceOr is ns, or the pod's namespace in a cluster, or "default".
func leaseNamespaceOr(log *slog.Logger, ns string) string {
	if ns != "" {
		return ns
	}
	ns, err := kubeconfig.InClusterNamespace()
	if err != nil {
		log.Info(`leader election: no -leader-elect-resource-namespace and not in a pod; using "default"`, "err", err)
		return "default"
	}
	return ns
}
