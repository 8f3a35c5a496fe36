package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kubeinternals/informers/trace"
)

// step is one stage a journey must pass: a stage and the kind of event it reports.
type step struct {
	stage trace.Stage
	kind  trace.Kind
	// ok: only an event without an error (Reason "") passes this step.
	ok bool
}

func (s step) String() string {
	if s.ok {
		return string(s.stage) + " " + string(s.kind) + " ok"
	}
	return string(s.stage) + " " + string(s.kind)
}

// passedBy reports whether e is this step.
func (s step) passedBy(e trace.Event) bool {
	return e.Stage == s.stage && e.Kind == s.kind && (!s.ok || e.Reason == "")
}

// toTheHandler is what every change passes first: the reflector sees it, the
// informer's queue (trace.RealFIFO by default, trace.DeltaFIFO in the classic
// pipeline) queues it and hands it over, the informer writes the cache and fans it
// out, and the handler's listener buffers it and calls the handler. A Foo deletion
// ends here, when the handler returns: foo-controller registers no Foo DeleteFunc.
func toTheHandler(queue trace.Stage) []step {
	return []step{
		{trace.Reflector, trace.WatchEvent, false},
		{queue, trace.Queued, false},
		{queue, trace.Popped, false},
		{trace.Informer, trace.Applied, false},
		{trace.Informer, trace.FannedOut, false},
		{trace.Listener, trace.Buffered, false},
		{trace.Listener, trace.HandlerCalled, false},
	}
}

// toTheWorker is the rest of the way once a handler adds a key: a worker gets it,
// syncs, and is done. The journey ends with a sync that succeeded: one that failed —
// the Foo's status written from a cached Foo older than the apiserver's, answered
// 409 Conflict — is retried after the rate limiter's delay, and the journey shows
// the failed sync, its done, the retry's add and get, then the sync that succeeded.
var toTheWorker = []step{
	{trace.Workqueue, trace.Added, false},
	{trace.Workqueue, trace.Got, false},
	{trace.Controller, trace.Reconciled, true},
	{trace.Workqueue, trace.Done, false},
}

// fromWatchToWorker is a Foo change: enqueueFoo adds the Foo's own key.
func fromWatchToWorker(queue trace.Stage) []step {
	return slices.Concat(toTheHandler(queue), toTheWorker)
}

// throughAMapping is a Deployment change: handleDeployment first maps the Deployment
// to its owner Foo's key.
func throughAMapping(queue trace.Stage) []step {
	return slices.Concat(toTheHandler(queue), []step{{trace.Controller, trace.Mapped, false}}, toTheWorker)
}

// toTheHandlerReturn is a Foo deletion, which queues nothing.
func toTheHandlerReturn(queue trace.Stage) []step {
	return slices.Concat(toTheHandler(queue), []step{{trace.Listener, trace.HandlerReturned, false}})
}

// filledBy returns how the informer named source filled its cache ("watch-list" or
// "list": the Type of its first ListStarted) and the stage of its queue, as the trace
// shows them; "" for what the trace does not show.
func filledBy(events []trace.Event, source string) (list string, queue trace.Stage) {
	for _, e := range events {
		if e.Source != source {
			continue
		}
		if list == "" && e.Stage == trace.Reflector && e.Kind == trace.ListStarted {
			list = e.Type
		}
		if queue == "" && (e.Stage == trace.RealFIFO || e.Stage == trace.DeltaFIFO) {
			queue = e.Stage
		}
	}
	return list, queue
}

// journey describes one change to follow through the trace.
type journey struct {
	title string
	// start picks the watch event the journey begins with.
	start func(trace.Event) bool
	// within, if not 0, limits start to the first within events: the change to
	// follow happened before the trace grew past that.
	within int
	// source and key name the changed object: its informer ("foos", "deployments")
	// and its key. The journey follows it as trace.Journey does: its own stages, then
	// the workqueue key its handler queued, or mapped it to (a Deployment's owner Foo).
	source, key string
	// want are the stages it must pass, in order.
	want []step
}

// extract returns the journey's events from events, and how many of the wanted
// stages, in order, they passed. It begins at the last event start picks (the most
// recent such change), keeps the events a trace.Follower of the object keeps from
// there, and ends with the last wanted stage.
//
// Why a Follower that starts at the change: it takes up the workqueue key only once
// a handler queued or mapped the object, so the workqueue and controller events of
// an earlier change of the same key — a Foo sync still finishing when the Deployment
// named like it changes, say — stay out. So do the events of the other informer's
// object of the same name: only its mapping into the key is kept.
func (j journey) extract(events []trace.Event) ([]trace.Event, int) {
	first := -1
	for i, e := range events {
		if j.within > 0 && i >= j.within {
			break
		}
		if j.start(e) {
			first = i
		}
	}
	if first < 0 {
		return nil, 0
	}
	f := trace.NewFollower(j.source, j.key)
	var out []trace.Event
	next := 0
	for _, e := range events[first:] {
		if !f.Next(e) {
			continue
		}
		out = append(out, e)
		if j.want[next].passedBy(e) {
			next++
			if next == len(j.want) {
				return out, next
			}
		}
	}
	return out, next
}

// await waits (up to 15s) until rec holds the whole journey, then prints it to out.
// The trace is complete only when the worker is done, which can be a moment after
// the tour has seen the change's effect in the API.
func (j journey) await(ctx context.Context, rec *trace.Recorder, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var got []trace.Event
	passed := 0
	err := poll(ctx, func() (bool, error) {
		got, passed = j.extract(rec.Events())
		return passed == len(j.want), nil
	})
	if err != nil {
		return fmt.Errorf("the journey of %s stopped before %q: %w", j.title, j.want[passed], err)
	}
	return printJourney(out, j.title, got)
}

// printJourney prints a journey as a timeline under a title, and the stages it
// passed as one line, each named once, in the order it first reached them.
func printJourney(out io.Writer, title string, events []trace.Event) error {
	var stages []string
	seen := map[trace.Stage]bool{}
	for _, e := range events {
		if !seen[e.Stage] {
			seen[e.Stage] = true
			stages = append(stages, string(e.Stage))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\njourney of %s (offset from the watch event · stage · component · what it did):\n", title)
	if err := trace.WriteTimeline(&b, events); err != nil {
		return err
	}
	fmt.Fprintf(&b, "  stages passed: %s\n\n", strings.Join(stages, " → "))
	_, err := io.WriteString(out, b.String())
	return err
}

// watchEvent picks the watch event of type typ (ADDED, MODIFIED, DELETED) for key
// from the informer named source, at resource version rv if rv is not "".
func watchEvent(source, key, typ, rv string) func(trace.Event) bool {
	return func(e trace.Event) bool {
		return e.Stage == trace.Reflector && e.Kind == trace.WatchEvent && e.Source == source &&
			e.Key == key && e.Type == typ && (rv == "" || e.ResourceVersion == rv)
	}
}

// legend is printed once, before the first journey.
const legend = `
Each journey below is the trace of one change, stage by stage (package trace):
  reflector   watch-list (or LIST) and WATCH: the change arrives from the API server as a watch event
  realfifo    the informer's queue by default (client-go 1.37): every event in order, popped in batches
  deltafifo   the classic queue, chosen by name: deltas grouped per object key
  informer    writes the change to the cache (the indexer), then fans it out to handlers
  listener    one per handler: buffers the notification, calls the handler
  workqueue   keys waiting for a worker: deduplicated, rate-limited on retry
  controller  foo-controller's own code: mapping a Deployment to its Foo, the sync
`
