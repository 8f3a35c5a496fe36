package trace

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Journey returns, in order, the events about key: every stage's events for that
// object key, and — from the moment a handler reports (Tracer.Map) that key caused
// work for another workqueue key — that key's events too. It is how the timeline
// follows a Deployment's status change to the Foo it belongs to.
//
// Events without a key (a LIST, a watch starting, a backoff) are not part of any
// journey.
func Journey(events []Event, key string) []Event {
	f := NewFollower(key)
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
// Feed it every event in order.
type Follower struct {
	follow map[string]bool
}

// NewFollower starts following key.
func NewFollower(key string) *Follower {
	return &Follower{follow: map[string]bool{key: true}}
}

// Next reports whether e is part of the journey; a Mapped event that is makes the
// follower take up its target key (Detail) from then on.
func (f *Follower) Next(e Event) bool {
	if e.Key == "" || !f.follow[e.Key] {
		return false
	}
	if e.Kind == Mapped && e.Detail != "" {
		f.follow[e.Detail] = true
	}
	return true
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
