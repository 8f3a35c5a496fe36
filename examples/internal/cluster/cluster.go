package cluster

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
	"github.com/kubeinternals/informers/kubeconfig"
)

// ErrNeedsLocalControlPlane is returned by the fault methods on a $KUBECONFIG cluster.
var ErrNeedsLocalControlPlane = errors.New("needs the local control plane (unset KUBECONFIG)")

// Options tunes Start. The zero value starts a plain local cluster.
type Options struct {
	// APIServerFlags are kube-apiserver flags beyond the local cluster's defaults,
	// such as a watch cache size. Ignored on $KUBECONFIG.
	APIServerFlags []string
	// Logger receives one line when the cluster is chosen and one when it is ready.
	// Nil means slog.Default().
	Logger *slog.Logger
}

// Cluster is a cluster to run examples on, and the faults it can inject.
type Cluster struct {
	// Watched is the config for the informers an example observes. On the local
	// cluster it goes through a proxy that Cut and Refuse act on.
	Watched *rest.Config
	// Direct is the config for the example's own requests (creating and changing
	// objects), which must work while the watched connections are cut or refused.
	// Its client-side rate limit is raised (see Unthrottled).
	Direct *rest.Config
	// Local is true on the embedded control plane, where faults can be injected.
	Local bool

	env   *testenv.Env   // nil on $KUBECONFIG
	proxy *testenv.Proxy // nil on $KUBECONFIG
	owned bool           // Stop stops env and proxy: Start started them
}

// Start uses the cluster in $KUBECONFIG if it is set, or starts the embedded local
// cluster (internal/testrig/testenv's Cluster profile) with a proxy in front of it. Stop
// releases what it started.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if os.Getenv("KUBECONFIG") != "" {
		cfg, src, err := kubeconfig.Load("")
		if err != nil {
			return nil, err
		}
		log.Info("using the cluster in $KUBECONFIG; faults cannot be injected into it", "server", cfg.Host, "from", src.String())
		return &Cluster{Watched: cfg, Direct: Unthrottled(cfg)}, nil
	}
	log.Info("starting the embedded local cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok)")
	start := time.Now()
	env, err := testenv.Launch(ctx, testenv.Options{Profile: testenv.Cluster, APIServerFlags: opts.APIServerFlags})
	if err != nil {
		return nil, err
	}
	proxy, err := testenv.StartProxy(env.Config.Host)
	if err != nil {
		env.Stop()
		return nil, err
	}
	log.Info("local cluster ready", "after", time.Since(start).Round(time.Millisecond), "server", env.Config.Host, "proxy", proxy.Addr())
	c := local(env, proxy)
	c.owned = true
	return c, nil
}

// local is the Cluster of a started control plane and its proxy.
func local(env *testenv.Env, proxy *testenv.Proxy) *Cluster {
	return &Cluster{Watched: proxy.Config(env.Config), Direct: Unthrottled(env.Config), Local: true, env: env, proxy: proxy}
}

// Stop stops the proxy and the local cluster if Start started them; on $KUBECONFIG
// it does nothing. It blocks until the control plane's processes have exited.
func (c *Cluster) Stop() {
	if !c.owned {
		return
	}
	c.proxy.Close()
	c.env.Stop()
}

// Unthrottled copies cfg with a client-side rate limit high enough for an example's
// bursts of writes. Why: rest.Config's zero QPS means 5 requests per second, which
// would make creating a few hundred objects take a minute.
func Unthrottled(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = 200, 400
	return c
}

// Kubeconfig is a value for $KUBECONFIG that gives a child process the cluster: the
// local cluster's admin kubeconfig (straight to kube-apiserver, not through the
// proxy), or $KUBECONFIG itself.
func (c *Cluster) Kubeconfig() string {
	if c.env != nil {
		return c.env.Kubeconfig
	}
	return os.Getenv("KUBECONFIG")
}
