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
	"os"
	"time"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/examples/internal/promtext"
)

func main() {
	flags := kube.AddFlags(flag.CommandLine)
	workers := flag.Int("workers", 2, "number of workers syncing Foos in parallel")
	resync := flag.Duration("resync", 30*time.Second, "informer resync period (0 disables)")
	drain := flag.Duration("drain-timeout", 25*time.Second, "on SIGTERM, how long the syncs in progress may take to finish")
	pipeline := flag.String("pipeline", string(controller.DefaultPipeline),
		`informer pipeline: "default" (RealFIFO fed by a watch-list, as client-go 1.36) or "classic" (DeltaFIFO fed by a paged LIST)`)
	metricsAddr := flag.String("metrics-bind-address", "", `serve /metrics (Prometheus text format) on this address, e.g. ":8080"; "" disables`)
	probeAddr := flag.String("health-probe-bind-address", "", `serve /healthz and /readyz on this address, e.g. ":8081"; "" disables`)
	flag.Parse()

	log := flags.MustLogger()
	cfg := flags.MustConfig(log)

	if *resync == 0 {
		*resync = -1 // Options: negative disables, 0 means the default
	}
	reg := promtext.NewRegistry()
	metrics := promtext.NewProvider(reg)
	c, err := controller.New(cfg, controller.Options{
		Workers: *workers, ResyncPeriod: *resync, DrainTimeout: *drain, Logger: log,
		Pipeline: controller.Pipeline(*pipeline), InformerMetrics: metrics, QueueMetrics: metrics,
	})
	if err != nil {
		log.Error("building the controller", "err", err)
		os.Exit(1)
	}
	ctx, stop := kube.SignalContext(context.Background())
	defer stop()
	if *metricsAddr != "" {
		if err := serve(ctx, log, "metrics", *metricsAddr, metricsMux(reg)); err != nil {
			log.Error("serving metrics", "err", err)
			os.Exit(1)
		}
	}
	if *probeAddr != "" {
		if err := serve(ctx, log, "health probes", *probeAddr, probesMux(c.Ready)); err != nil {
			log.Error("serving health probes", "err", err)
			os.Exit(1)
		}
	}
	if err := c.Run(ctx); err != nil {
		log.Error("controller failed", "err", err)
		stop()
		os.Exit(1)
	}
	log.Info("stopped cleanly")
}
