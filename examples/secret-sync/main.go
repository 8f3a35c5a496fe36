// Command secret-sync copies the Secrets of a source namespace into every namespace
// annotated secret-sync.kubeinternals.io/enabled=true, and keeps the copies in step.
// See README.md, and the controller package for the one-shot (constant key) pattern.
//
// SIGINT or SIGTERM stops it gracefully: no new work, the sync in progress finishes.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/examples/secret-sync/controller"
)

func main() {
	flags := kube.AddFlags(flag.CommandLine)
	source := flag.String("source-namespace", "secret-sync-source", "namespace whose Secrets are copied")
	annotation := flag.String("annotation", controller.DefaultAnnotation, `namespace annotation that opts in (value "true")`)
	resync := flag.Duration("resync", 10*time.Minute, "informer resync period (0 disables)")
	flag.Parse()

	log := flags.MustLogger()
	cfg := flags.MustConfig(log)
	c, err := controller.New(cfg, controller.Options{
		SourceNamespace: *source, Annotation: *annotation, ResyncPeriod: *resync, Logger: log,
	})
	if err != nil {
		log.Error("building the controller", "err", err)
		os.Exit(1)
	}
	ctx, stop := kube.SignalContext(context.Background())
	defer stop()
	if err := c.Run(ctx); err != nil {
		log.Error("controller failed", "err", err)
		stop()
		os.Exit(1)
	}
	log.Info("stopped cleanly", "stats", fmt.Sprintf("%+v", c.Stats()))
}
