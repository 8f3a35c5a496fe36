//go:build !replayonly

package main

import (
	"net/http"
	"sync"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/trace"
)

// liveParts is what a live explorer's server has beyond a replay's: the world the
// actions act on, the runner that switches the controller's pipeline, the buttons,
// and the last action, for repeat-last.
type liveParts struct {
	world   world
	runner  *runner // switches the controller's pipeline
	actions []action
	local   bool // faults can be injected

	mu   sync.Mutex
	last *lastAction // the last action that succeeded, for repeat-last; guarded by mu
}

// newLiveServer is newServer with the actions on w, the pipeline control through r,
// and the faults on when local.
func newLiveServer(h *hub, w world, r *runner, addr string, local bool, done chan struct{}) (*server, error) {
	s, err := newServer(h, addr, done)
	if err != nil {
		return nil, err
	}
	s.world, s.runner, s.actions, s.local = w, r, actions(), local
	return s, nil
}

// liveRoutes adds the actions' routes, each behind checkAction.
func (s *server) liveRoutes(mux *http.ServeMux) {
	mux.HandleFunc("/api/{action}", s.serveAction)
	// Why under /api too: they are actions, behind the same checks (checkAction).
	mux.HandleFunc("/api/"+switchPipeline, s.serveSwitchPipeline)
	mux.HandleFunc("/api/"+repeatLast, s.serveRepeatLast)
}

// livePage adds the buttons and the pipeline control to the page's data.
func (s *server) livePage(d *pageData) {
	d.Local, d.Actions, d.Namespace, d.DocsBase, d.PipelineReading = s.local, s.actions, namespace, docsBase, pipelineReading
	for _, p := range controller.Pipelines {
		d.Pipelines = append(d.Pipelines, labelOf(p, 0))
	}
	if !s.local {
		d.FaultsOff = "needs the local control plane: run without $KUBECONFIG"
	}
}

// lastActionText is what repeat-last would do again; "" before the first action.
func (s *server) lastActionText() string {
	if last := s.lastAction(); last != nil {
		return last.String()
	}
	return ""
}

// markAction puts an action into the trace, as the lab's faults and changes are, just
// before it runs: the plots mark it on their time axis, and a recording of the
// explorer's events would keep it.
func (s *server) markAction(act *action, in args) {
	trace.New(s.hub.Record).Action((&lastAction{act: *act, in: in}).String(), act.Fault)
}
