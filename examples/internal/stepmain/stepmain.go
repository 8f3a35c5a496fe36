// Package stepmain is the main() every step program (02-… to 07-…) shares: the common
// flags (-kubeconfig, -log-level, -log-format, -timeout), the logger, the cluster
// config, and a context that ends on SIGINT/SIGTERM or when the timeout passes. Each
// program then shows only its run function, which its integration test calls directly.
package stepmain

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/kube"
)

// RunFunc is a step program's logic. cfg is nil when Options.NoCluster is set.
type RunFunc func(ctx context.Context, cfg *rest.Config, log *slog.Logger, out io.Writer) error

// Options tunes Main.
type Options struct {
	// Timeout is the -timeout default: the program stops by itself after it. 0 means 60s.
	Timeout time.Duration
	// NoCluster skips loading a kubeconfig (the program needs no cluster).
	NoCluster bool
}

// Main registers the common flags on flag.CommandLine, parses it (so register the
// program's own flags before calling Main), and runs run until it returns, the timeout
// passes or a signal arrives. It exits the process with 1 if run fails.
func Main(run RunFunc, opts Options) {
	flags := kube.AddFlags(flag.CommandLine)
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	timeout := flag.Duration("timeout", opts.Timeout, "stop after this long (Ctrl-C stops sooner)")
	flag.Parse()

	log := flags.MustLogger()
	var cfg *rest.Config
	if !opts.NoCluster {
		cfg = flags.MustConfig(log)
	}
	ctx, stop := kube.SignalContext(context.Background())
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	err := run(ctx, cfg, log, os.Stdout)
	cancel()
	stop()
	if err != nil {
		log.Error("failed", "err", err)
		os.Exit(1)
	}
}
