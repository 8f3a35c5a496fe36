//go:build !replayonly

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/leaderelection"
	"github.com/kubeinternals/informers/trace"
)

// pipelineStarted is the explorer's event (Stage explorerStage) for a controller
// started on the pipeline named Type; Reason says which it replaced and that the boxes
// start from zero.
const pipelineStarted trace.Kind = "pipeline started"

// pipelineInfo is what the page says about a pipeline besides what it is made of
// (controller.Pipeline.Describe): whose it is, and the trace stage its queue reports
// as.
type pipelineInfo struct {
	Queue trace.Stage
	Note  string
}

// pipelineInfos has an entry for every controller.Pipelines name (a test checks that,
// and that each Queue is the one Describe names).
var pipelineInfos = map[controller.Pipeline]pipelineInfo{
	controller.DefaultPipeline: {Queue: trace.RealFIFO, Note: "client-go 1.37 default"},
	controller.ClassicPipeline: {Queue: trace.DeltaFIFO, Note: "the classic one most write-ups describe"},
}

// labelOf is p's label for the run numbered n.
func labelOf(p controller.Pipeline, n int) pipelineLabel {
	info := pipelineInfos[p]
	return pipelineLabel{Name: string(p), Text: p.Describe() + " (" + info.Note + ")", Queue: string(info.Queue), Run: n}
}

// parsePipeline checks a pipeline's name, for the -pipeline flag and the switch.
func parsePipeline(name string) (controller.Pipeline, error) {
	p := controller.Pipeline(name)
	if !slices.Contains(controller.Pipelines, p) {
		var names []string
		for _, q := range controller.Pipelines {
			names = append(names, fmt.Sprintf("%q (%s)", q, q.Describe()))
		}
		return "", fmt.Errorf("pipeline %q must be %s", name, strings.Join(names, " or "))
	}
	return p, nil
}

// errStopping refuses a switch asked for while the explorer shuts down.
var errStopping = errors.New("the explorer is shutting down")

// runner runs foo-controller on one pipeline at a time, traced into the hub, and
// switches it to the other: it stops the running controller and waits for it, resets
// the hub's boxes, and starts a new controller with the same options (tracer, hooks,
// workers) but the other controller.Options.Pipeline.
//
// Why a new controller rather than new informers inside the old one: a Controller is
// single-use (controller.ErrAlreadyRun) and owns its informers, workqueue and workers.
// A switch is the restart a deployed controller gets when its --pipeline flag changes.
//
// Why reset the boxes: every box counts what one controller's components did; the new
// controller's informers, queues, handlers and workqueue are new objects, and adding
// their counts to the old ones would credit the new pipeline with the old one's work.
// The journey stream keeps every event, with a marker where the switch happened.
type runner struct {
	hub   *hub
	build func(controller.Pipeline) (*ctlRun, error)
	log   *slog.Logger
	// ctx is every run's parent; stop cancels it.
	ctx    context.Context
	cancel context.CancelFunc

	// switching is held for a whole switch, and by stop: one at a time, and never a
	// controller started after stop.
	switching sync.Mutex

	mu   sync.Mutex
	cur  *ctlRun // the running controller; guarded by mu
	runs int     // controllers started so far; guarded by mu
}

// newRunner returns a runner whose controllers build makes. It starts nothing: call
// begin.
//
// Why WithoutCancel: the explorer stops the server first, then the controller
// (explorer.Stop); the end of ctx (Ctrl-C) must not stop the controller before that.
func newRunner(ctx context.Context, h *hub, build func(controller.Pipeline) (*ctlRun, error), log *slog.Logger) *runner {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &runner{hub: h, build: build, log: log, ctx: rctx, cancel: cancel}
}

// begin starts the first controller, on p. It does not wait for its caches: the
// page shows them fill.
func (r *runner) begin(p controller.Pipeline) error {
	next, err := r.build(p)
	if err != nil {
		return err
	}
	r.switching.Lock()
	defer r.switching.Unlock()
	if r.ctx.Err() != nil {
		return errStopping
	}
	r.launch(next, "")
	return nil
}

// switchTo stops the running controller and starts one on p, then waits (up to ctx)
// until the new informers have filled their caches, so that the next action is seen
// by the new pipeline's watch rather than folded into its initial list. from is the
// pipeline it replaced ("" if none ran); from == p means p was running already, and
// nothing changed.
//
// Invariant: the old controller has returned from Run — its workers finished the key
// in hand, its informers and handlers stopped — before the hub is reset, so no event
// of the old pipeline lands in the new boxes.
func (r *runner) switchTo(ctx context.Context, p controller.Pipeline) (from controller.Pipeline, err error) {
	r.switching.Lock()
	defer r.switching.Unlock()
	if r.ctx.Err() != nil {
		return "", errStopping
	}
	old := r.current()
	if old != nil {
		from = old.pipeline
	}
	if from == p {
		return p, nil
	}
	// Why build before stopping the old one: New starts nothing but may fail; when it
	// does, the old controller is still running and nothing changed.
	next, err := r.build(p)
	if err != nil {
		return from, err
	}
	if old != nil {
		if err := old.end(); err != nil {
			// Why go on: the old run's failure (a 403 when it started, say) is no reason
			// to refuse the new one.
			r.log.Warn("the replaced controller had failed", "pipeline", old.pipeline, "err", err)
		}
	}
	r.launch(next, from)
	if err := next.awaitSynced(ctx); err != nil {
		return from, fmt.Errorf("foo-controller runs the %s pipeline, but %w", p, err)
	}
	return from, nil
}

// launch resets the hub for next and starts it. The caller holds switching, and no
// controller is running.
func (r *runner) launch(next *ctlRun, from controller.Pipeline) {
	r.mu.Lock()
	r.runs++
	n := r.runs
	r.cur = next
	r.mu.Unlock()
	r.hub.startPipeline(labelOf(next.pipeline, n), from)
	next.start(r.ctx)
}

// settled is the running pipeline once any switch in progress has ended; "" before
// begin.
func (r *runner) settled() controller.Pipeline {
	r.switching.Lock()
	defer r.switching.Unlock()
	if cur := r.current(); cur != nil {
		return cur.pipeline
	}
	return ""
}

// current is the running controller's run; nil before begin.
func (r *runner) current() *ctlRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur
}

// controller is the running controller, for reading its caches; nil before begin and
// in unit tests.
func (r *runner) controller() *controller.Controller {
	if cur := r.current(); cur != nil {
		return cur.ctl
	}
	return nil
}

// stop ends the runner: it refuses switches from now on, stops the running
// controller (ending a switch that waits for its caches) and waits for it. It returns
// the controller's Run error, but for a lease that ended with the stop: that is a
// normal end, logged at info level.
//
// Why a lost lease is a normal end here: a stop that comes while a renewal round is
// failing — just after the explorer cut the watch or restarted the apiserver, say —
// counts as a lost lease (leaderelection's transition S4: the workers stop at once,
// without a drain), and the replica then releases the Lease as on any stop (S2). That
// is the elector keeping its promise at the replica's own stop, not a failure, and
// foo-controller has logged the loss already.
func (r *runner) stop() error {
	r.cancel()
	r.switching.Lock()
	defer r.switching.Unlock()
	if cur := r.current(); cur != nil {
		err := cur.end()
		if errors.Is(err, leaderelection.ErrLeaseLost) {
			r.log.Info("foo-controller stopped; its lease ended with the stop (a renewal round was failing when it came)", "err", err)
			return nil
		}
		return err
	}
	return nil
}

// ctlRun is one controller: made by the runner's build, started by start, ended by end.
type ctlRun struct {
	pipeline controller.Pipeline
	// ctl is the controller; nil in unit tests, whose build stands in for it.
	ctl *controller.Controller
	// body runs the controller until its ctx ends: ctl.Run.
	body func(context.Context) error
	// synced are closed when each informer has filled its cache.
	synced []<-chan struct{}

	// cancel, ended and err are set by start; end reads them (both under the runner's
	// switching lock).
	cancel context.CancelFunc
	ended  chan struct{} // closed when body returned
	err    error         // body's result; read only after ended is closed
}

// buildController makes the runs of foo-controller on cfg with opts, one pipeline
// each.
func buildController(cfg *rest.Config, opts controller.Options) func(controller.Pipeline) (*ctlRun, error) {
	return func(p controller.Pipeline) (*ctlRun, error) {
		opts.Pipeline = p
		ctl, err := controller.New(cfg, opts)
		if err != nil {
			return nil, err
		}
		return &ctlRun{pipeline: p, ctl: ctl, body: ctl.Run, synced: []<-chan struct{}{ctl.Foos().Synced(), ctl.Deployments().Synced()}}, nil
	}
}

// start runs the controller under parent.
func (r *ctlRun) start(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	r.cancel, r.ended = cancel, make(chan struct{})
	// Goroutine owned by the runner: the controller. It exits when ctx ends (end
	// cancels it, or the runner's stop does), and end waits for it.
	go func() {
		defer close(r.ended)
		r.err = r.body(ctx)
	}()
}

// end stops the controller and waits until Run has returned. A run stopped before
// its caches synced reports that as context.Canceled: here that is a clean stop.
func (r *ctlRun) end() error {
	r.cancel()
	<-r.ended
	if errors.Is(r.err, context.Canceled) {
		return nil
	}
	return r.err
}

// awaitSynced waits until every informer of the run has filled its cache, the run
// ends, or ctx does.
func (r *ctlRun) awaitSynced(ctx context.Context) error {
	for _, synced := range r.synced {
		select {
		case <-synced:
		case <-r.ended:
			if r.err != nil {
				return fmt.Errorf("it stopped before its caches synced: %w", r.err)
			}
			return errors.New("it stopped before its caches synced")
		case <-ctx.Done():
			return fmt.Errorf("its caches have not synced yet: %w", context.Cause(ctx))
		}
	}
	return nil
}

// startPipeline resets every box for a controller about to start on label, and marks
// that in the journey stream; from is the pipeline of the controller it replaces (""
// for the first).
//
// Why the box reset and the mark are under one hold of mu: a stream or a snapshot
// sees either the old boxes and no mark, or the new ones and the mark, never a mix.
// Invariant: the caller has stopped the old controller, so every event after the mark
// is the new controller's.
func (h *hub) startPipeline(label pipelineLabel, from controller.Pipeline) {
	reason := "foo-controller on the " + label.Name + " pipeline: " + label.Text
	if from != "" {
		reason += ", replacing the " + string(from) + " one; the boxes start from zero"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pipe = h.freshPipeline(label.Queue)
	h.label = label
	h.recordLocked(trace.Event{Time: time.Now(), Stage: explorerStage, Kind: pipelineStarted, Source: "explorer", Type: label.Name, Reason: reason})
}
