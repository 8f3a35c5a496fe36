package trace

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// Sink receives events. It is called synchronously on the reporting stage's
// goroutine — sometimes with that stage's lock held, so that the events of one stage
// arrive in the order they happened — from many goroutines at once.
//
// Pitfall: a Sink must be fast and safe for concurrent use, and must never call back
// into the pipeline (an Add to the workqueue from a Sink can deadlock). Record and
// move on; print or ship elsewhere.
//
// A Sink that panics loses that event (for itself only) and the pipeline goes on:
// Emit recovers the panic and reports it through slog.Default() (see Emit).
type Sink func(Event)

// Tracer hands each stage's events to its sinks. A nil *Tracer is the off switch:
// every stage holds one in its Options and checks it before building an event, so a
// pipeline without a tracer pays one pointer comparison per event site — no
// allocation, no formatting, no call.
//
// Build one with New and pass it to the informer Factory (or to each stage's
// Options); it is safe for concurrent use and is never modified after New.
type Tracer struct {
	sinks []Sink
	// panics counts the sink panics recovered so far, to report 1, 2, 4, 8, … of them.
	panics atomic.Int64
}

// New returns a Tracer that sends every event to each of sinks, in order. With no
// sinks it returns nil: tracing off.
func New(sinks ...Sink) *Tracer {
	var kept []Sink
	for _, s := range sinks {
		if s != nil {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return &Tracer{sinks: kept}
}

// Emit stamps e with the current time (if e.Time is zero) and gives it to every sink.
// Emit on a nil Tracer does nothing, but stages check for nil first so that they do
// not even build the Event. A sink's panic never reaches the caller: it is recovered,
// the other sinks still get the event, and it is logged through slog.Default().
func (t *Tracer) Emit(e Event) {
	if t == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	for _, s := range t.sinks {
		t.deliver(s, e)
	}
}

// deliver calls one sink, containing a panic.
//
// Why: a stage emits on its own goroutine, often holding its lock (a listener's add,
// a queue's Add). A panic escaping the sink would unwind through that stage — past a
// handler's recover, or leaving a mutex locked — so one bad sink would stop the
// informer or crash the process. Recovered here, it costs that sink that event.
func (t *Tracer) deliver(s Sink, e Event) {
	defer func() {
		if r := recover(); r != nil {
			t.sinkPanicked(r, e)
		}
	}()
	s(e)
}

// sinkPanicked reports a recovered sink panic through slog.Default(): the 1st, 2nd,
// 4th, 8th, … one, so a sink that panics on every event logs O(log n) lines.
func (t *Tracer) sinkPanicked(r any, e Event) {
	n := t.panics.Add(1)
	if n&(n-1) != 0 {
		return
	}
	slog.Default().Error("trace sink panicked; it lost this event, the pipeline goes on",
		"panicsSoFar", n, "stage", string(e.Stage), "kind", string(e.Kind), "key", e.Key, "panic", fmt.Sprint(r))
}

// Map reports that a handler turned key, an object of source (such as "deployments"),
// into the workqueue key to — an owner reference followed back to its owner, say.
// Journey uses it to follow an object into the keys it caused work for. A nil Tracer
// ignores it.
func (t *Tracer) Map(source, key, to string) {
	if t == nil {
		return
	}
	t.Emit(Event{Stage: Controller, Kind: Mapped, Source: source, Key: key, Detail: to})
}

// Reconciled reports that a worker's sync of key ended after d with err (nil on
// success). A nil Tracer ignores it.
func (t *Tracer) Reconciled(source, key string, d time.Duration, err error) {
	if t == nil {
		return
	}
	e := Event{Stage: Controller, Kind: Reconciled, Source: source, Key: key, Duration: d}
	if err != nil {
		e.Reason = err.Error()
	}
	t.Emit(e)
}

// Action reports what the program running the pipeline did to it: a fault it
// injected (fault true: a cut connection, a compaction, a restart) or a change it
// made (an object created, scaled, deleted). A recording keeps it, so a replay or a
// plot can mark the moment. A nil Tracer ignores it.
func (t *Tracer) Action(what string, fault bool) {
	if t == nil {
		return
	}
	e := Event{Stage: Experiment, Kind: Action, Source: "experiment", Type: "change", Detail: what}
	if fault {
		e.Type = "fault"
	}
	t.Emit(e)
}

// KeyOf renders a workqueue item as a trace key: a string as itself, a fmt.Stringer
// by its String method, anything else with fmt's %v. Stages call it only when tracing
// is on, because it may allocate.
func KeyOf[T any](item T) string {
	switch v := any(item).(type) {
	case string:
		return v
	case fmt.Stringer:
		return v.String()
	default:
		return fmt.Sprint(v)
	}
}
