package cluster

import "context"

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
