package main

import (
	"fmt"
	"strings"

	"github.com/kubeinternals/informers/trace"
)

// A scenario's Recorded function checks its recording (docs/recordings/NAME.jsonl.gz)
// for the heart of what its Answer claims, from the trace alone: the recording must
// still show it after the code changes, or be regenerated (make recordings).

// recorded is what a Recorded function reads: the events of one recording.
type recorded []trace.Event

// check is a Check whose claim is about the recording.
func check(claim string, ok bool, got string, args ...any) Check {
	c := Check{Claim: claim, OK: ok, Got: fmt.Sprintf(got, args...)}
	if strings.TrimSpace(c.Got) == "" {
		c.Got = "nothing"
	}
	return c
}

// where is the events for which keep holds.
func (r recorded) where(keep func(trace.Event) bool) recorded { return trace.Filter(r, keep) }

// of is the events of kind k.
func (r recorded) of(k trace.Kind) recorded { return kinds(r, k) }

// from is the events of source.
func (r recorded) from(source string) recorded {
	return r.where(func(e trace.Event) bool { return e.Source == source })
}

// about is the events whose key ends in suffix ("/pt-1": that object in any
// namespace).
func (r recorded) about(suffix string) recorded {
	return r.where(func(e trace.Event) bool { return strings.HasSuffix(e.Key, suffix) })
}

// after is the events after the first action whose description contains what;
// empty if there is no such action.
func (r recorded) after(what string) recorded {
	for i, e := range r {
		if e.Kind == trace.Action && strings.Contains(e.Detail, what) {
			return r[i+1:]
		}
	}
	return nil
}

// actionKey is the namespace/name the first action whose description starts with
// prefix names right after it ("create: POST Foo ns/example (…" → "ns/example"); ""
// if no action does. A check follows that exact key: an object of the same name an
// earlier scenario left in a namespace still being deleted reaches cluster-wide
// informers too.
func (r recorded) actionKey(prefix string) string {
	for _, e := range r.of(trace.Action) {
		if rest, ok := strings.CutPrefix(e.Detail, prefix); ok {
			key, _, _ := strings.Cut(rest, " ")
			return key
		}
	}
	return ""
}

// before is the events before the first action whose description contains what;
// all of them if there is no such action.
func (r recorded) before(what string) recorded {
	for i, e := range r {
		if e.Kind == trace.Action && strings.Contains(e.Detail, what) {
			return r[:i]
		}
	}
	return r
}

// library is the events the library's stages reported: no action, no log line, nothing the
// scenario observed by itself.
func (r recorded) library() recorded {
	return r.where(func(e trace.Event) bool { return e.Stage != trace.Experiment && e.Stage != trace.Log })
}

// types is the Type of each event.
func (r recorded) types() []string {
	out := make([]string, len(r))
	for i, e := range r {
		out[i] = e.Type
	}
	return out
}

// maxBacklog is the largest Backlog among the events.
func (r recorded) maxBacklog() int {
	m := 0
	for _, e := range r {
		m = max(m, e.Backlog)
	}
	return m
}

// index is the position of the first event for which match holds, or -1.
func (r recorded) index(match func(trace.Event) bool) int {
	for i, e := range r {
		if match(e) {
			return i
		}
	}
	return -1
}

// itemsOf is the Items of the first event, 0 if there is none.
func itemsOf(r recorded) int {
	if len(r) == 0 {
		return 0
	}
	return r[0].Items
}

// rvsOf lists the events' resourceVersions: "2087, 2101" (`""` for an empty one).
func rvsOf(r recorded) string {
	var out []string
	for _, e := range r {
		out = append(out, fmt.Sprintf("%q", e.ResourceVersion))
	}
	return strings.Join(out, ", ")
}
