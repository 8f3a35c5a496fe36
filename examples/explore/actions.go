//go:build !replayonly

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/examples/internal/cluster"
)

// docsBase is where the page's links to the book point.
const docsBase = "https://github.com/kubeinternals/informers/blob/main/"

// world is what the buttons act on: the cluster, and the controller's hooks. The
// explorer's is live (live.go); the tests use a fake.
type world interface {
	CreateFoo(ctx context.Context, name string, replicas int32) error
	TouchFoo(ctx context.Context, name string) error
	ScaleFoo(ctx context.Context, name string, replicas int32) error
	DeleteFoo(ctx context.Context, name string) error
	ScaleDeployment(ctx context.Context, name string, replicas int32) error
	FailReconciles(ctx context.Context, name string, times int) error
	SlowHandler(handler string, delay time.Duration)
	CutWatch() (int, error)
	CompactEtcd(ctx context.Context) (int64, error)
	RestartAPIServer(ctx context.Context) error
}

// args are an action's inputs, as the page posts them. Each action reads the fields
// it lists in action.Fields; validate checks those.
type args struct {
	Name     string `json:"name,omitempty"`
	Replicas *int32 `json:"replicas,omitempty"`
	Times    int    `json:"times,omitempty"`
	Handler  string `json:"handler,omitempty"`
	DelayMS  *int   `json:"delayMs,omitempty"`
}

// Bounds of the inputs: enough to see every behaviour, small enough for a laptop.
const (
	maxName     = 40
	maxReplicas = 10
	maxTimes    = 10
	maxDelay    = 5 * time.Second
)

// action is one button: its endpoint (/api/Name), its inputs, what it does, what to
// expect, and where the lab and the book explain it.
type action struct {
	Name   string
	Label  string
	Fields []string // of "name", "replicas", "times", "handler", "delayMs"
	Expect string
	// Lab is the lab scenario that asks the same question (docs/lab.md#Lab), Chapter
	// the book's section ("docs/04-informer.md#anchor").
	Lab, Chapter string
	// Fault: needs the local control plane.
	Fault bool
	// Creates: the action creates the object it names, so repeat-last, which runs it
	// again, gives it a fresh name when that one exists (freshNames).
	Creates bool
	run     func(ctx context.Context, w world, a args) (string, error)
}

// Needs reports whether the action takes the input field.
func (a action) Needs(field string) bool {
	for _, f := range a.Fields {
		if f == field {
			return true
		}
	}
	return false
}

// validate checks the fields a needs, with a message naming the field and its bounds.
func (a action) validate(in args) error {
	var problems []string
	if a.Needs("name") {
		if errs := validation.IsDNS1123Label(in.Name); len(errs) > 0 || len(in.Name) > maxName {
			problems = append(problems, fmt.Sprintf("name %q must be a lowercase DNS label of at most %d characters (a-z, 0-9, '-')", in.Name, maxName))
		}
	}
	if a.Needs("replicas") && (in.Replicas == nil || *in.Replicas < 0 || *in.Replicas > maxReplicas) {
		problems = append(problems, fmt.Sprintf("replicas must be given, from 0 to %d", maxReplicas))
	}
	if a.Needs("times") && (in.Times < 1 || in.Times > maxTimes) {
		problems = append(problems, fmt.Sprintf("times must be from 1 to %d", maxTimes))
	}
	if a.Needs("handler") && in.Handler != controller.FooHandler && in.Handler != controller.DeploymentHandler {
		problems = append(problems, fmt.Sprintf("handler %q must be %s or %s", in.Handler, controller.FooHandler, controller.DeploymentHandler))
	}
	// Pitfall: compare the integer, not time.Duration(delayMs)*time.Millisecond — the
	// product overflows int64 nanoseconds past 9223372036854 ms and wraps, to a negative
	// or a small positive duration that would pass a check on the Duration.
	if a.Needs("delayMs") && (in.DelayMS == nil || *in.DelayMS < 0 || int64(*in.DelayMS) > maxDelay.Milliseconds()) {
		problems = append(problems, fmt.Sprintf("delayMs must be given, from 0 to %d", maxDelay.Milliseconds()))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// serveAction is POST /api/{action}: check the caller, decode and validate the
// inputs, act, and answer {"did": …} or {"error": …}.
func (s *server) serveAction(w http.ResponseWriter, r *http.Request) {
	if !s.checkAction(w, r) {
		return
	}
	name := r.PathValue("action")
	var act *action
	for i := range s.actions {
		if s.actions[i].Name == name {
			act = &s.actions[i]
		}
	}
	if act == nil {
		httpError(w, http.StatusNotFound, fmt.Sprintf("no action %q", name))
		return
	}
	var in args
	if !decodeBody(w, r, &in) {
		return
	}
	if err := act.validate(in); err != nil {
		httpError(w, http.StatusBadRequest, act.Name+": "+err.Error())
		return
	}
	if act.Fault && !s.local {
		httpError(w, http.StatusConflict, act.Name+": "+cluster.ErrNeedsLocalControlPlane.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Minute)
	defer cancel()
	s.markAction(act, in)
	did, err := act.run(ctx, s.world, in)
	if err != nil {
		httpError(w, statusOf(err), act.Name+": "+err.Error())
		return
	}
	s.remember(act, in)
	writeJSON(w, http.StatusOK, map[string]string{"did": did, "expect": act.Expect})
}

// statusOf maps an action's error to an HTTP status: the apiserver's own code for
// its refusals (404 no such Foo, 409 already exists, 422 invalid), 409 for a fault
// this cluster cannot inject or a repeat out of fresh names, 503 while the explorer
// shuts down, 502 for anything else the cluster did.
func statusOf(err error) int {
	var status apierrors.APIStatus
	switch {
	case errors.Is(err, cluster.ErrNeedsLocalControlPlane), errors.Is(err, errNamesTaken):
		return http.StatusConflict
	case errors.Is(err, errStopping):
		return http.StatusServiceUnavailable
	case errors.As(err, &status) && status.Status().Code >= 400 && status.Status().Code < 500:
		return int(status.Status().Code)
	default:
		return http.StatusBadGateway
	}
}
