package kube

import (
	"flag"
	"io"
	"log/slog"

	"k8s.io/client-go/rest"
)

// Flags are the command-line flags every example shares.
type Flags struct {
	// Kubeconfig is -kubeconfig: a path, or "" to fall back as Resolve describes.
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
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "",
		"path to a kubeconfig file; default $KUBECONFIG, then ~/.kube/config, then the in-cluster service account")
	fs.StringVar(&f.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&f.LogFormat, "log-format", "text", "log format: text or json")
	return f
}

// Config loads the *rest.Config the flags select, and says where it came from.
func (f *Flags) Config() (*rest.Config, Source, error) {
	return LoadConfig(f.Kubeconfig)
}

// Logger builds the logger the flags describe, writing to w.
func (f *Flags) Logger(w io.Writer) (*slog.Logger, error) {
	return NewLogger(w, f.LogLevel, f.LogFormat)
}
