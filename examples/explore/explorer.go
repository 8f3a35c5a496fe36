//go:build !replayonly

package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/kubeinternals/informers/examples/foo-controller/artifacts"
	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/examples/internal/cluster"
	"github.com/kubeinternals/informers/examples/internal/crd"
	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/trace"
)

// exploreAPIServerFlags turn off the watch cache for the two resources the
// controller watches.
//
// Why: with a watch cache, a watch from an old resourceVersion is served from the
// cache's window of recent events, whatever etcd has compacted, and "compact etcd"
// would show nothing. Served straight from etcd, the next watch after a compaction
// gets the 410 Gone that a busy cluster produces when the window moves on.
var exploreAPIServerFlags = []string{"--watch-cache-sizes=deployments.apps#0,foos.samplecontroller.k8s.io#0"}

// startExplorer installs the Foo CRD, starts foo-controller on c on pipeline p,
// traced into a hub, and serves the page on ln. Stop undoes it.
func startExplorer(ctx context.Context, c *cluster.Cluster, ln net.Listener, log *slog.Logger, p controller.Pipeline) (x *explorer, err error) {
	var r *runner
	defer func() {
		if err != nil {
			ln.Close()
			if r != nil {
				// Why: its context would otherwise never be cancelled; no controller ran.
				_ = r.stop()
			}
		}
	}()
	if _, err := parsePipeline(string(p)); err != nil {
		return nil, err
	}
	if _, err := crd.InstallCRD(ctx, c.Direct, artifacts.CRD(), crd.Options{Logger: log}); err != nil {
		return nil, fmt.Errorf("installing the Foo CRD: %w", err)
	}
	w, err := newLive(ctx, c)
	if err != nil {
		return nil, err
	}
	x = &explorer{done: make(chan struct{}), served: make(chan error, 1), URL: "http://" + ln.Addr().String() + "/"}
	x.hub = newHub(layout{
		Informers: []string{"foos", "deployments"},
		Handlers:  []string{controller.FooHandler, controller.DeploymentHandler},
		HandlerOf: map[string]string{controller.FooHandler: "foos", controller.DeploymentHandler: "deployments"},
		Workers:   2,
	}, ringSize, func() map[string]cacheSize {
		ctl := x.controller()
		if ctl == nil {
			return nil
		}
		return map[string]cacheSize{"foos": sizeOf(ctl.Foos().Indexer()), "deployments": sizeOf(ctl.Deployments().Indexer())}
	})
	// The controller's log lines go to the timeline too, among the events they explain,
	// as a recording keeps them (trace.CaptureLogs).
	log = slog.New(trace.CaptureLogs(log.Handler(), "explore", slog.LevelInfo, x.hub.Record))
	// Every controller the runner starts, on either pipeline, gets these: one tracer
	// into one hub, the buttons' hooks.
	//
	// Why leader election with one replica: the workers start only once the Lease is
	// held, as in deployment.yaml, and the workers box shows it. ReleaseOnCancel lets
	// the controller a pipeline switch starts take the Lease at once.
	opts := controller.Options{Workers: 2, Logger: log, Tracer: trace.New(x.hub.Record), Hooks: w.hooks(),
		LeaderElection: &controller.LeaderElection{Namespace: "default", Name: "foo-controller-explore", Identity: "explore", ReleaseOnCancel: true}}
	r = newRunner(ctx, x.hub, buildController(c.Watched, opts), log)
	x.runner = r
	s, err := newLiveServer(x.hub, w, x.runner, ln.Addr().String(), c.Local, x.done)
	if err != nil {
		return nil, err
	}
	if err := x.runner.begin(p); err != nil {
		return nil, err
	}
	x.srv = &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}
	// Goroutine owned by the explorer: the HTTP server; Stop shuts it down and waits.
	go func() { x.served <- x.srv.Serve(ln) }()
	return x, nil
}

// liveExplorer is the live explorer's controller: the runner that starts it on a
// pipeline and switches it. runner is nil in replay.
type liveExplorer struct {
	runner *runner
}

// stopLive stops the controller, if one runs.
func (l *liveExplorer) stopLive() error {
	if l.runner == nil {
		return nil
	}
	return l.runner.stop()
}

// controller is the running controller; nil before it started, and in replay.
func (x *explorer) controller() *controller.Controller {
	if x.runner == nil {
		return nil
	}
	return x.runner.controller()
}

// sizeOf is a cache's object count and, per index, its number of values.
func sizeOf[T indexer.Object](ix indexer.Indexer[T]) cacheSize {
	s := cacheSize{Objects: len(ix.ListKeys()), Indices: map[string]int{}}
	for name := range ix.GetIndexers() {
		s.Indices[name] = len(ix.ListIndexFuncValues(name))
	}
	return s
}
