package trace

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Journey returns, in order, the events of one object — key, as informer source
// (its resource: "foos", "deployments") knows it — and of the work it caused. The
// rule, event by event (Follower applies it):
//
//   - The object's own stages: a reflector, queue or informer event (and any other
//     stage's but the listener's, workqueue's and controller's) belongs to the
//     journey when its Source is source and its Key is key. A listener event belongs
//     when its Informer is source and its Key is key: the handlers of that informer.
//   - Work keys: the workqueue events and the Reconciled events whose Key is a work
//     key of the journey belong to it, whatever queue or controller reports them. The
//     object's key becomes a work key when, during a call of one of its handlers
//     (HandlerCalled to HandlerReturned or PanicRecovered), the key is added to a
//     workqueue (Added, AddedAfter, RateLimited): the handler queued it.
//   - Mappings: a Mapped event of the object (Source and Key its own) belongs to the
//     journey, and its Detail becomes a work key. A Mapped event of another object
//     into a work key of the journey belongs too — it says why that key came back —
//     but none of that object's other events do.
//
// Nothing else brings another object in: a Deployment default/x is never part of the
// journey of the Foo default/x, except for its Mapped event into the Foo's key. With
// source "", key is a work key from the start, and the journey is its workqueue and
// Reconciled events and the Mapped events into it. Events without a key (a LIST, a
// watch starting, a backoff) are never part of a journey.
//
// Why follow an object of one informer, not a bare key: keys are only unique within
// a resource. sample-controller names a Foo's Deployment like the Foo, and a journey
// by key alone mixed the Deployment's stages into the Foo's. Handlers and workqueues
// are where the two meet, so that is where the journey looks for the link.
//
// Why a work key is taken up at the handler's Add, not at the handler's call: a
// handler does not always queue the object's key. handleDeployment maps a Deployment
// to its Foo's key, or queues nothing when the Foo is gone. Taken up at the call, the
// Deployment's key would follow every later sync of a Foo with the same name.
//
// Pitfall: trace events carry no goroutine, so "during the call" means "between the
// two events". Another goroutine's Add of the same key in that window (a second
// handler queueing a same-named object) is taken for the handler's own. The window is
// one handler call long.
//
// Pitfall: a RealFIFO pops in batches and names only a batch's first key (Popped). An
// object popped further down a batch has no Popped event in its journey; its
// informer's Applied, right after, shows that it left the queue. A batch that starts
// with the object is in its journey, as any queue event of the object is.
func Journey(events []Event, source, key string) []Event {
	f := NewFollower(source, key)
	var out []Event
	for _, e := range events {
		if f.Next(e) {
			out = append(out, e)
		}
	}
	return out
}

// Follower is Journey's rule one event at a time, for a caller that keeps events in
// storage of its own (a ring, a file) and should not copy them into a slice first.
// Feed it every event in order. A Follower is not safe for concurrent use.
type Follower struct {
	// source and key name the object followed; source "" follows no object.
	source, key string
	// work holds the workqueue keys the journey has taken up.
	work map[string]bool
	// inCall holds the handlers (Listener Source) now in a call for the object.
	inCall map[string]bool
}

// NewFollower starts following the object key of informer source, or, with source
// "", the workqueue key key.
func NewFollower(source, key string) *Follower {
	f := &Follower{source: source, key: key, work: map[string]bool{}, inCall: map[string]bool{}}
	if source == "" {
		f.work[key] = true
	}
	return f
}

// Next reports whether e is part of the journey, and takes up the work keys e
// links to it (see Journey).
func (f *Follower) Next(e Event) bool {
	if e.Key == "" {
		return false
	}
	own := f.source != "" && e.Key == f.key
	switch e.Stage {
	case Listener:
		if !own || e.Informer != f.source {
			return false
		}
		switch e.Kind {
		case HandlerCalled:
			f.inCall[e.Source] = true
		case HandlerReturned, PanicRecovered:
			delete(f.inCall, e.Source)
		}
		return true
	case Workqueue:
		if own && len(f.inCall) > 0 && (e.Kind == Added || e.Kind == AddedAfter || e.Kind == RateLimited) {
			f.work[e.Key] = true
		}
		return f.work[e.Key]
	case Controller:
		switch e.Kind {
		case Mapped:
			if own && e.Source == f.source {
				if e.Detail != "" {
					f.work[e.Detail] = true
				}
				return true
			}
			return e.Detail != "" && f.work[e.Detail]
		case Reconciled:
			return f.work[e.Key]
		}
		return false
	default:
		return own && e.Source == f.source
	}
}

// Filter returns the events for which keep returns true, in order.
func Filter(events []Event, keep func(Event) bool) []Event {
	var out []Event
	for _, e := range events {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// WriteTimeline prints events one per line, each with its offset from the first
// event, its stage, its source and its sentence (Event.String):
//
//	+0.041ms  deltafifo  foos   queued Updated default/example-foo (2 deltas pending, queue 1)
func WriteTimeline(w io.Writer, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	start := events[0].Time
	offsetW, stageW, sourceW := 0, 0, 0
	for _, e := range events {
		offsetW = max(offsetW, len(Offset(e.Time.Sub(start))))
		stageW = max(stageW, len(e.Stage))
		sourceW = max(sourceW, len(e.Source))
	}
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "  %*s  %-*s  %-*s  %s\n", offsetW, Offset(e.Time.Sub(start)), stageW, e.Stage, sourceW, e.Source, e)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Offset prints a duration since the first event the way the timeline does:
// "+0.041ms".
func Offset(d time.Duration) string {
	return "+" + ms(d)
}
