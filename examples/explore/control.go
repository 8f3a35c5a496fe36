//go:build !replayonly

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The pipeline control's endpoints, under /api/ like the buttons' actions.
const (
	switchPipeline = "switch-pipeline"
	repeatLast     = "repeat-last"
)

// pipelineReading are the book's sections on the two pipelines, which the control
// links to (a test checks they exist).
var pipelineReading = []string{
	"docs/02-deltafifo.md#why-client-go-moved-its-informers-from-deltafifo-to-realfifo",
	"docs/03-reflector.md#watch-list-or-list-how-the-state-is-fetched",
}

// switchTimeout bounds a switch: the old controller's drain, then the new one's
// caches. Longer than an action's 2 minutes: a drain may take up to the controller's
// DrainTimeout (30s) before the new informers even start.
const switchTimeout = 3 * time.Minute

// serveSwitchPipeline is POST /api/switch-pipeline {"pipeline": "classic"}: stop
// foo-controller, start it on the pipeline named, and answer once its caches have
// filled — or at once when that pipeline is running already. The target is named,
// not toggled, so that a double click switches once.
func (s *server) serveSwitchPipeline(w http.ResponseWriter, r *http.Request) {
	if !s.checkAction(w, r) {
		return
	}
	var in struct {
		Pipeline string `json:"pipeline"`
	}
	if !decodeBody(w, r, &in) {
		return
	}
	p, err := parsePipeline(in.Pipeline)
	if err != nil {
		httpError(w, http.StatusBadRequest, switchPipeline+": "+err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), switchTimeout)
	defer cancel()
	from, err := s.runner.switchTo(ctx, p)
	if err != nil {
		httpError(w, statusOf(err), switchPipeline+": "+err.Error())
		return
	}
	label := labelOf(p, 0)
	did := fmt.Sprintf("foo-controller already runs the %s pipeline: %s", p, label.Text)
	if from != p {
		did = fmt.Sprintf("stopped foo-controller on the %s pipeline and started it on the %s one: %s; its caches are filled", from, p, label.Text)
	}
	writeJSON(w, http.StatusOK, map[string]string{"did": did, "expect": switchExpect(label), "pipeline": string(p)})
}

// switchExpect is what a switch to the pipeline of label promises.
func switchExpect(label pipelineLabel) string {
	filler := "a watch-list (its initial events, then the end bookmark)"
	if label.Queue != "realfifo" {
		filler = "a LIST"
	}
	return "The old controller stopped — its workers finished the key in hand — and a new one started with the same tracer and hooks. " +
		"The boxes start from zero, the journey marks the switch, the queue boxes say " + label.Queue + " and the reflector boxes say their caches were filled by " + filler + ". " +
		"Press Repeat last action: the same change, through " + label.Queue + "."
}

// lastAction is an action that succeeded, with its inputs: what repeat-last runs
// again.
type lastAction struct {
	act action
	in  args
}

// String is the action and its inputs, as the page's repeat button shows them:
// `Create Foo (name demo, replicas 2)`.
func (l *lastAction) String() string {
	var parts []string
	for _, f := range l.act.Fields {
		var v string
		switch f {
		case "name":
			v = l.in.Name
		case "replicas":
			v = strconv.Itoa(int(*l.in.Replicas))
		case "times":
			v = strconv.Itoa(l.in.Times)
		case "handler":
			v = l.in.Handler
		case "delayMs":
			v = strconv.Itoa(*l.in.DelayMS)
		}
		parts = append(parts, f+" "+v)
	}
	if len(parts) == 0 {
		return l.act.Label
	}
	return l.act.Label + " (" + strings.Join(parts, ", ") + ")"
}

// remember keeps act and its validated inputs as the last action.
func (s *server) remember(act *action, in args) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = &lastAction{act: *act, in: in}
}

// lastAction is the last action that succeeded; nil before the first.
func (s *server) lastAction() *lastAction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// errNamesTaken: every name repeat-last tried for a create exists already.
var errNamesTaken = errors.New("all exist already")

// serveRepeatLast is POST /api/repeat-last {}: run the last action that succeeded
// again, with the same inputs, on the pipeline running now — waiting first for a
// switch in progress, so that the answer names the pipeline that sees the change.
//
// Why the last action that succeeded, and not the last one pressed: a refused one
// (a typo in a name, a 404) is nothing to compare between pipelines.
//
// Pitfall: the repeated action meets the cluster the first one left. A Foo that was
// created exists, so a repeated create takes a fresh name (freshNames); a deleted one
// is gone, so a repeated delete gets the apiserver's 404, which the answer says.
func (s *server) serveRepeatLast(w http.ResponseWriter, r *http.Request) {
	if !s.checkAction(w, r) {
		return
	}
	var none struct{}
	if !decodeBody(w, r, &none) {
		return
	}
	last := s.lastAction()
	if last == nil {
		httpError(w, http.StatusConflict, repeatLast+": nothing to repeat yet: press one of the actions first")
		return
	}
	p := s.runner.settled()
	on := fmt.Sprintf("on the %s pipeline (%s)", p, p.Describe())
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Minute)
	defer cancel()
	in := last.in
	names := []string{in.Name}
	if last.act.Creates {
		names = freshNames(in.Name, string(p))
	}
	var taken []string
	for _, name := range names {
		in.Name = name
		s.markAction(&last.act, in)
		did, err := last.act.run(ctx, s.world, in)
		if last.act.Creates && apierrors.IsAlreadyExists(err) {
			taken = append(taken, name)
			continue
		}
		if err != nil {
			httpError(w, statusOf(err), fmt.Sprintf("%s: %s %s: %v", repeatLast, last.act.Name, on, err))
			return
		}
		switch len(taken) {
		case 0:
		case 1:
			did += fmt.Sprintf(" — a fresh name, since %s already exists", taken[0])
		default:
			did += fmt.Sprintf(" — a fresh name, since %s already exist", strings.Join(taken, ", "))
		}
		writeJSON(w, http.StatusOK, map[string]string{"did": "repeated " + on + ": " + did, "expect": last.act.Expect, "action": last.act.Name, "name": in.Name, "pipeline": string(p)})
		return
	}
	err := fmt.Errorf("the Foos %s %w: delete one, or create a Foo with another name", strings.Join(taken, ", "), errNamesTaken)
	httpError(w, statusOf(err), fmt.Sprintf("%s: %s %s: %v", repeatLast, last.act.Name, on, err))
}

// freshNames are the names a repeated create tries, in order: the name first (it may
// have been deleted since), then the name with the pipeline's (demo-classic), then
// numbered (demo-classic-2 … demo-classic-9) — each cut to a valid name of at most
// maxName characters. Why the pipeline's name: the reader sees in the Foo's name
// which pipeline created it.
func freshNames(name, pipeline string) []string {
	out := []string{name}
	for i := 1; i <= 9; i++ {
		suffix := "-" + pipeline
		if i > 1 {
			suffix += "-" + strconv.Itoa(i)
		}
		base := name
		if len(base)+len(suffix) > maxName {
			// Invariant: name is a DNS label, so it starts with a letter or digit and
			// something is left after trimming; maxName-len(suffix) is at least 30.
			base = strings.TrimRight(base[:maxName-len(suffix)], "-")
		}
		out = append(out, base+suffix)
	}
	return out
}
