package testenv

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// SecondAPIServer is another kube-apiserver on the Env's etcd: what every highly
// available control plane runs (kind's multi-control-plane too) — several apiservers
// on one etcd, each with its own watch cache, which follows etcd through its own watch
// and so is at its own resourceVersion. It has the first apiserver's flags, identities
// and serving certificate, on its own port.
//
// Its connection to etcd goes through EtcdLink, a Proxy: Freeze it and this
// apiserver's watch cache stops advancing while the apiserver still answers what its
// cache can answer — a lagging apiserver, for real. What it answers while frozen is
// pinned by TestIntegrationALaggingAPIServer: a LIST at resourceVersion "0" gets the
// stale cache at once; a WATCH from a resourceVersion it has not reached is accepted
// and stays silent; a LIST or watch-list at such a resourceVersion waits 3 s, then
// fails with "Too large resource version"; one at "" waits for etcd.
type SecondAPIServer struct {
	// Config has admin credentials for this apiserver, reached directly.
	Config *rest.Config
	// EtcdLink carries every connection from this apiserver to etcd. Freeze it to make
	// the apiserver lag; Thaw it to let the apiserver catch up.
	EtcdLink *Proxy

	env  *Env
	proc *process // set once, under env.secondMu, before s is in env.seconds
	once sync.Once
}

// StartSecondAPIServer starts a kube-apiserver with the first one's flags, then
// extraFlags (a later flag wins: "--watch-cache-sizes=podtemplates#100" turns a watch
// cache the first one has off back on), on a free port, its etcd connection through
// a new EtcdLink, and waits until it is ready. Stop stops it; Env.Stop stops every one
// still running.
//
// Like the first one it runs with --endpoint-reconciler-type=none (see apiServerArgsFor);
// with a reconciler, both on 127.0.0.1 but on different ports, each would keep
// overwriting the other's port in the "kubernetes" Service's endpoints, and a frozen one
// would hang on that write.
func (e *Env) StartSecondAPIServer(ctx context.Context, extraFlags ...string) (_ *SecondAPIServer, err error) {
	if e.opts.Detached {
		return nil, errors.New("StartSecondAPIServer is for attached control planes: its etcd link lives in this process")
	}
	link, err := StartProxy(e.etcdURL())
	if err != nil {
		return nil, fmt.Errorf("etcd link: %w", err)
	}
	s := &SecondAPIServer{EtcdLink: link, env: e}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	port, err := portOrFree(0, "a second kube-apiserver")
	if err != nil {
		return nil, err
	}
	s.Config = rest.CopyConfig(e.Config)
	s.Config.Host = "https://127.0.0.1:" + strconv.Itoa(port)

	e.secondMu.Lock()
	e.secondStarted++
	name := "kube-apiserver-" + strconv.Itoa(e.secondStarted+1) // the first is kube-apiserver
	e.secondMu.Unlock()

	args := e.apiServerArgsFor(port, "http://"+link.Addr())
	args = append(args, extraFlags...)
	proc, err := startProcess(name, e.Dir, filepath.Join(e.binDir, "kube-apiserver"), args, false)
	if err != nil {
		return nil, err
	}
	e.secondMu.Lock()
	s.proc = proc
	e.seconds = append(e.seconds, s)
	e.secondMu.Unlock()
	if err := e.waitReady(ctx, s.proc, s.Config.Host); err != nil {
		return nil, err
	}
	return s, nil
}

// Name is the program's name, which is also its log file's (kube-apiserver-2.log in
// Env.Dir).
func (s *SecondAPIServer) Name() string {
	if s.proc == nil {
		return ""
	}
	return s.proc.name
}

// Stop stops this apiserver (SIGTERM, 3 s, then SIGKILL) and closes its etcd link.
// It is idempotent, and safe while the link is frozen.
func (s *SecondAPIServer) Stop() {
	s.once.Do(func() {
		if s.proc != nil {
			// Why a short grace: frozen, it cannot finish its graceful shutdown.
			s.proc.stop(3 * time.Second)
		}
		s.EtcdLink.Close()
		e := s.env
		e.secondMu.Lock()
		defer e.secondMu.Unlock()
		for i, o := range e.seconds {
			if o == s {
				e.seconds = append(e.seconds[:i], e.seconds[i+1:]...)
				break
			}
		}
	})
}

// stopSecondAPIServers stops every second apiserver still running.
func (e *Env) stopSecondAPIServers() {
	e.secondMu.Lock()
	seconds := append([]*SecondAPIServer(nil), e.seconds...)
	e.secondMu.Unlock()
	for _, s := range seconds {
		s.Stop()
	}
}

// secondProcesses are the processes of the second apiservers still running.
func (e *Env) secondProcesses() []*process {
	e.secondMu.Lock()
	defer e.secondMu.Unlock()
	var ps []*process
	for _, s := range e.seconds {
		if s.proc != nil {
			ps = append(ps, s.proc)
		}
	}
	return ps
}
