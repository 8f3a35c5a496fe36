package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kubeinternals/informers/trace"
)

// TestAJourneyLeavesOutAnEarlierSyncOfTheSameKey replays the interleaving one CI run
// met: a Deployment named like its Foo changes while the Foo's previous sync is still
// finishing. That sync's workqueue and controller events carry the same key but came
// before any handler queued the Deployment's change, so they are not part of its
// journey; nor are the Foo's own stages, though its key is the same.
func TestAJourneyLeavesOutAnEarlierSyncOfTheSameKey(t *testing.T) {
	const key = "demo/example-foo"
	ev := func(stage trace.Stage, kind trace.Kind, source string) trace.Event {
		e := trace.Event{Stage: stage, Kind: kind, Source: source, Key: key, Type: "MODIFIED", Detail: key}
		if stage == trace.Listener {
			e.Informer = map[string]string{"handleDeployment": "deployments", "enqueueFoo": "foos"}[source]
		}
		return e
	}
	events := []trace.Event{
		ev(trace.Reflector, trace.WatchEvent, "deployments"),
		ev(trace.RealFIFO, trace.Queued, "deployments"),
		ev(trace.Controller, trace.Reconciled, "foos"), // the earlier change's sync ends
		ev(trace.Workqueue, trace.Done, "foos"),
		ev(trace.Reflector, trace.WatchEvent, "foos"), // the Foo's status write comes back
		ev(trace.RealFIFO, trace.Popped, "deployments"),
		ev(trace.Informer, trace.Applied, "deployments"),
		ev(trace.Informer, trace.FannedOut, "deployments"),
		ev(trace.Listener, trace.Buffered, "handleDeployment"),
		ev(trace.Listener, trace.HandlerCalled, "handleDeployment"),
		ev(trace.Controller, trace.Mapped, "deployments"),
		ev(trace.Workqueue, trace.Added, "foos"),
		ev(trace.Listener, trace.HandlerReturned, "handleDeployment"),
		ev(trace.Listener, trace.HandlerCalled, "enqueueFoo"),
		ev(trace.Workqueue, trace.Got, "foos"),
		ev(trace.Controller, trace.Reconciled, "foos"),
		ev(trace.Workqueue, trace.Done, "foos"),
	}
	j := journey{
		title: "a Deployment change", source: "deployments", key: key,
		want:  throughAMapping(trace.RealFIFO),
		start: func(e trace.Event) bool { return e.Kind == trace.WatchEvent && e.Source == "deployments" },
	}
	got, passed := j.extract(events)
	assert.Equal(t, len(j.want), passed, "every stage, in order")
	assert.Len(t, got, len(events)-4, "all but the earlier sync's reconcile and done, and the Foo's watch event and handler call")
	for _, e := range got {
		assert.NotEqual(t, "enqueueFoo", e.Source)
		assert.False(t, e.Stage == trace.Reflector && e.Source == "foos", "the Foo's watch event")
	}

	var out strings.Builder
	assert.NoError(t, printJourney(&out, j.title, got))
	assert.Contains(t, out.String(), "stages passed: reflector → realfifo → informer → listener → controller → workqueue\n")
}

// TestAJourneyGoesOnToTheRetryOfAFailedSync replays what a CI run met: the sync of the
// Foo's key wrote the Foo's status from a cached Foo older than the apiserver's, got
// 409 Conflict, and was retried. The journey does not end at the failed sync's done:
// it goes on to the retry's add and get and the sync that succeeded.
func TestAJourneyGoesOnToTheRetryOfAFailedSync(t *testing.T) {
	const key = "demo/example-foo"
	ev := func(stage trace.Stage, kind trace.Kind, reason string) trace.Event {
		return trace.Event{Stage: stage, Kind: kind, Source: "foos", Key: key, Type: "MODIFIED", Reason: reason}
	}
	events := []trace.Event{
		ev(trace.Reflector, trace.WatchEvent, ""),
		ev(trace.RealFIFO, trace.Queued, ""),
		ev(trace.RealFIFO, trace.Popped, ""),
		ev(trace.Informer, trace.Applied, ""),
		ev(trace.Informer, trace.FannedOut, ""),
		{Stage: trace.Listener, Kind: trace.Buffered, Source: "enqueueFoo", Informer: "foos", Key: key},
		{Stage: trace.Listener, Kind: trace.HandlerCalled, Source: "enqueueFoo", Informer: "foos", Key: key},
		{Stage: trace.Workqueue, Kind: trace.Added, Source: "foos", Key: key},
		{Stage: trace.Workqueue, Kind: trace.Got, Source: "foos", Key: key},
		{Stage: trace.Controller, Kind: trace.Reconciled, Source: "foos", Key: key, Reason: `Operation cannot be fulfilled on foos.samplecontroller.k8s.io "example-foo": the object has been modified`},
		{Stage: trace.Workqueue, Kind: trace.Done, Source: "foos", Key: key},
		{Stage: trace.Workqueue, Kind: trace.Added, Source: "foos", Key: key},
		{Stage: trace.Workqueue, Kind: trace.Got, Source: "foos", Key: key},
		{Stage: trace.Controller, Kind: trace.Reconciled, Source: "foos", Key: key},
		{Stage: trace.Workqueue, Kind: trace.Done, Source: "foos", Key: key},
	}
	j := journey{
		title: "the Foo's scale-up", source: "foos", key: key, want: fromWatchToWorker(trace.RealFIFO),
		start: func(e trace.Event) bool { return e.Kind == trace.WatchEvent },
	}
	got, passed := j.extract(events)
	assert.Equal(t, len(j.want), passed, "every stage, in order")
	assert.Len(t, got, len(events), "the failed sync, the retry and the sync that succeeded")
	last := got[len(got)-2]
	assert.Equal(t, trace.Reconciled, last.Kind)
	assert.Empty(t, last.Reason, "the journey ends with the sync that succeeded")
}
