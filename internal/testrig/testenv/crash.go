package testenv

import (
	"context"
	"errors"
)

// Crashes: the programs killed with SIGKILL, as the kernel's OOM killer or a node
// failure ends them — no graceful shutdown, no last response, connections reset — and
// started again on the same ports and data. The fault soak (parity/soak) uses them.

// KillAPIServer kills kube-apiserver with SIGKILL and waits until it is gone. Clients
// get "connection refused" until StartAPIServer.
func (e *Env) KillAPIServer() error {
	if e.opts.Detached {
		return errors.New("KillAPIServer is for attached control planes")
	}
	e.apiserver.kill()
	return nil
}

// KillEtcd kills etcd with SIGKILL and waits until it is gone. kube-apiserver keeps
// running: it answers what its watch cache holds and fails the rest, and /readyz
// fails, until StartEtcd.
func (e *Env) KillEtcd() error {
	if e.opts.Detached {
		return errors.New("KillEtcd is for attached control planes")
	}
	e.etcd.kill()
	return nil
}

// StartEtcd starts etcd again after KillEtcd, on the same ports and data directory,
// and waits until it is healthy and kube-apiserver is ready again.
//
// Why the data survives --unsafe-no-fsync: the flag skips fsync, which only matters
// if the machine loses power; the writes of a killed process are in the page cache.
func (e *Env) StartEtcd(ctx context.Context) error {
	if e.opts.Detached {
		return errors.New("StartEtcd is for attached control planes")
	}
	select {
	case <-e.etcd.done:
	default:
		return errors.New("StartEtcd: etcd is still running; call KillEtcd first")
	}
	if err := e.startEtcd(ctx); err != nil {
		return err
	}
	return e.waitReady(ctx, e.apiserver, e.Config.Host)
}
