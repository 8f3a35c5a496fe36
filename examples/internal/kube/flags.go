package kube

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/kubeconfig"
)

// Flags are the command-line flags every example shares.
type Flags struct {
	// Kubeconfig is -kubeconfig: a path, or "" to fall back as kubeconfig.Load describes.
	Kubeconfig string
	// LogLevel is -log-level: debug, info, warn or error.
	LogLevel string
	// LogFormat is -log-format: text or json.
	LogFormat string
}

// AddFlags registers -kubeconfig, -log-level and -log-format on fs and returns the struct
// they are parsed into. Call fs.Parse (flag.Parse) before reading it.
func AddFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", kubeconfig.FlagUsage)
	fs.StringVar(&f.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&f.LogFormat, "log-format", "text", "log format: text or json")
	return f
}

// Config loads the *rest.Config the flags select, and says where it came from.
func (f *Flags) Config() (*rest.Config, kubeconfig.Source, error) {
	return kubeconfig.Load(f.Kubeconfig)
}

// Logger builds the logger the flags describe, writing to w.
func (f *Flags) Logger(w io.Writer) (*slog.Logger, error) {
	return NewLogger(w, f.LogLevel, f.LogFormat)
}

// MustLogger builds the logger from the flags, or prints the flag error and exits 2.
// For main functions, after flag.Parse.
func (f *Flags) MustLogger() *slog.Logger {
	log, err := f.Logger(os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	return log
}

// MustConfig loads the cluster config (see kubeconfig.Load for where from) and logs which
// cluster it connects to, or logs why there is none and exits 1. For main functions.
func (f *Flags) MustConfig(log *slog.Logger) *rest.Config {
	cfg, src, err := f.Config()
	if err != nil {
		log.Error("no cluster", "err", err)
		os.Exit(1)
	}
	log.Info("connecting", "host", cfg.Host, "from", src.String())
	return cfg
}
