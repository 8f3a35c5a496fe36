package main

import (
	"testing"

	"github.com/kubeinternals/informers/trace"
)

// The labeller's listener records its return after the close that frees the reader,
// so the reader's return may be recorded first; the reader must still have returned
// after the labeller's call began, and a recording where it did not fails.
func TestHandlerMutatesRecordedAllowsEitherReturnOrder(t *testing.T) {
	ev := func(k trace.Kind, source string) trace.Event {
		return trace.Event{Kind: k, Source: source, Key: "ns/target", Type: "add"}
	}
	for _, c := range []struct {
		name   string
		events recorded
		ok     bool
	}{
		{"the labeller returned first", recorded{ev(trace.HandlerCalled, "labeller"), ev(trace.HandlerCalled, "reader"),
			ev(trace.HandlerReturned, "labeller"), ev(trace.HandlerReturned, "reader")}, true},
		{"the reader's return recorded first", recorded{ev(trace.HandlerCalled, "reader"), ev(trace.HandlerCalled, "labeller"),
			ev(trace.HandlerReturned, "reader"), ev(trace.HandlerReturned, "labeller")}, true},
		{"the reader returned before the labeller was called", recorded{ev(trace.HandlerCalled, "reader"), ev(trace.HandlerReturned, "reader"),
			ev(trace.HandlerCalled, "labeller"), ev(trace.HandlerReturned, "labeller")}, false},
		{"the labeller never returned", recorded{ev(trace.HandlerCalled, "labeller"), ev(trace.HandlerCalled, "reader"),
			ev(trace.HandlerReturned, "reader")}, false},
	} {
		if got := handlerMutatesRecorded(c.events); got.OK != c.ok {
			t.Errorf("%s: OK = %v, want %v (%s)", c.name, got.OK, c.ok, got.Got)
		}
	}
}
