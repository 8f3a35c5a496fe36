package cluster

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

// Cut closes every connection the watched informers have open, as a network failure
// would, and returns how many there were. New connections are accepted at once.
func (c *Cluster) Cut() (int, error) {
	if !c.Local {
		return 0, ErrNeedsLocalControlPlane
	}
	return c.proxy.Cut(), nil
}

// Refuse makes the apiserver unreachable for the watched informers until the
// returned function is called: their connections are cut and new ones refused.
func (c *Cluster) Refuse() (accept func() error, err error) {
	if !c.Local {
		return nil, ErrNeedsLocalControlPlane
	}
	c.proxy.Refuse()
	return c.proxy.Accept, nil
}

// Freeze holds every byte between the watched informers and the apiserver until the
// returned thaw is called: their connections stay open and silent, so a watch event the
// apiserver sends meanwhile arrives only after the thaw. Direct is not affected.
func (c *Cluster) Freeze() (thaw func(), err error) {
	if !c.Local {
		return nil, ErrNeedsLocalControlPlane
	}
	c.proxy.Freeze()
	return c.proxy.Thaw, nil
}

// CompactEtcd compacts etcd's history up to now and returns the revision. A watch
// that starts afterwards from an older resourceVersion — and is served from etcd, not
// from the apiserver's watch cache — gets 410 Gone.
func (c *Cluster) CompactEtcd(ctx context.Context) (int64, error) {
	if !c.Local {
		return 0, ErrNeedsLocalControlPlane
	}
	return c.env.CompactEtcd(ctx)
}

// RestartAPIServer stops kube-apiserver and starts it again on the same etcd.
//
// Pitfall: while it is down, the proxy in front of it still accepts connections and
// closes them at once, so the watched informers see a closed stream, not a refused
// connection.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	if !c.Local {
		return ErrNeedsLocalControlPlane
	}
	return c.env.RestartAPIServer(ctx)
}

// StartSecondAPIServer starts another kube-apiserver on the local cluster's etcd, with
// the same flags and then extraFlags, its etcd connection through a link that Freeze
// stops (see testenv.SecondAPIServer). The caller stops it; Stop stops it otherwise.
func (c *Cluster) StartSecondAPIServer(ctx context.Context, extraFlags ...string) (*testenv.SecondAPIServer, error) {
	if !c.Local {
		return nil, ErrNeedsLocalControlPlane
	}
	return c.env.StartSecondAPIServer(ctx, extraFlags...)
}

// FailOver sends the watched informers to the apiserver to, as a load balancer in
// front of both does when it fails over: their open connections are cut, and they
// reconnect to to. It returns how many connections it cut. Direct is not moved.
func (c *Cluster) FailOver(to *testenv.SecondAPIServer) (int, error) {
	if !c.Local {
		return 0, ErrNeedsLocalControlPlane
	}
	return c.proxy.Switch(to.Config.Host)
}

// FailBack sends the watched informers back to the first apiserver, cutting their
// connections to the other.
func (c *Cluster) FailBack() (int, error) {
	if !c.Local {
		return 0, ErrNeedsLocalControlPlane
	}
	return c.proxy.Switch(c.env.Config.Host)
}

// LimitedPath starts a second proxy in front of the local apiserver that closes each
// connection maxAge after it opened and paces its bytes to bytesPerSecond — a load
// balancer that cuts long streams, on a slow link — and returns a config that reaches
// the apiserver through it, whose client opens one HTTP/1.1 connection per request, so
// each request's age counts from its own start. stop closes the proxy.
//
// Why HTTP/1.1 without keep-alives: over HTTP/2 every request of a client shares one
// connection, and cutting it at its age would cut every request together.
func (c *Cluster) LimitedPath(maxAge time.Duration, bytesPerSecond int) (cfg *rest.Config, stop func(), err error) {
	if !c.Local {
		return nil, nil, ErrNeedsLocalControlPlane
	}
	p, err := testenv.StartProxy(c.env.Config.Host)
	if err != nil {
		return nil, nil, err
	}
	p.Limit(maxAge, bytesPerSecond)
	cfg = p.Config(c.env.Config)
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		p.Close()
		return nil, nil, fmt.Errorf("cluster: TLS config for the limited path: %w", err)
	}
	tlsConfig.NextProtos = []string{"http/1.1"}
	// Why clear TLSClientConfig: rest refuses a Transport together with TLS options;
	// the transport carries them now. The bearer token still applies.
	cfg.TLSClientConfig = rest.TLSClientConfig{}
	cfg.Transport = &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true}
	return cfg, p.Close, nil
}
