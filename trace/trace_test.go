package trace

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

func at(ms float64, e Event) Event {
	e.Time = t0.Add(time.Duration(ms * float64(time.Millisecond)))
	return e
}

func TestANilTracerIsOffAndSafe(t *testing.T) {
	var tr *Tracer
	assert.Nil(t, New(), "no sinks: no tracer")
	assert.Nil(t, New(nil, nil), "nil sinks are ignored")
	assert.NotPanics(t, func() {
		tr.Emit(Event{Kind: Added})
		tr.Map("deployments", "a", "b")
		tr.Reconciled("foos", "a", time.Second, nil)
	})
}

func TestEmitStampsTheTimeAndReachesEverySinkInOrder(t *testing.T) {
	var got []string
	tr := New(func(e Event) { got = append(got, "first "+string(e.Kind)) }, nil, func(e Event) {
		got = append(got, "second "+string(e.Kind))
		assert.False(t, e.Time.IsZero(), "Emit stamps events that have no time")
	})
	tr.Emit(Event{Kind: Got})
	tr.Emit(Event{Kind: Done, Time: t0})
	assert.Equal(t, []string{"first got", "second got", "first done", "second done"}, got)
}

type stringerKey struct{ ns, name string }

func (k stringerKey) String() string { return k.ns + "/" + k.name }

func TestKeyOfPrintsStringsStringersAndAnythingElse(t *testing.T) {
	assert.Equal(t, "default/a", KeyOf("default/a"))
	assert.Equal(t, "default/b", KeyOf(stringerKey{"default", "b"}))
	assert.Equal(t, "42", KeyOf(42))
}

func TestJourneyFollowsAnObjectIntoTheWorkqueueKeysItWasMappedTo(t *testing.T) {
	events := []Event{
		{Stage: Reflector, Kind: WatchEvent, Source: "deployments", Key: "ns/web-abc", Type: "MODIFIED"},
		{Stage: Reflector, Kind: WatchEvent, Source: "deployments", Key: "ns/other", Type: "MODIFIED"},
		{Stage: Workqueue, Kind: Added, Source: "foos", Key: "ns/web", Reason: "new"}, // before the mapping: another cause
		{Stage: Listener, Kind: HandlerCalled, Source: "deployments handler 1", Informer: "deployments", Key: "ns/web-abc", Type: "update"},
		{Stage: Controller, Kind: Mapped, Source: "deployments", Key: "ns/web-abc", Detail: "ns/web"},
		{Stage: Workqueue, Kind: Added, Source: "foos", Key: "ns/web", Reason: "dirty"},
		{Stage: Listener, Kind: HandlerReturned, Source: "deployments handler 1", Informer: "deployments", Key: "ns/web-abc", Type: "update"},
		{Stage: Listener, Kind: HandlerCalled, Source: "deployments handler 1", Informer: "deployments", Key: "ns/other", Type: "update"},
		{Stage: Workqueue, Kind: Got, Source: "foos", Key: "ns/web"},
		{Stage: Reflector, Kind: Relist, Source: "deployments", Reason: "410"}, // keyless: in nobody's journey
	}
	assert.Equal(t, []string{
		"reflector watch event deployments ns/web-abc", "listener handler called deployments handler 1 ns/web-abc",
		"controller mapped deployments ns/web-abc", "workqueue added foos ns/web",
		"listener handler returned deployments handler 1 ns/web-abc", "workqueue got foos ns/web",
	}, lines(Journey(events, "deployments", "ns/web-abc")))
}

// lines is each event as "stage kind source key", for comparing journeys.
func lines(events []Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, string(e.Stage)+" "+string(e.Kind)+" "+e.Source+" "+e.Key)
	}
	return out
}

// sameKey is a Foo and the Deployment it owns, both default/x, as sample-controller's
// example names them: the Foo is scaled and synced; meanwhile its Deployment changes,
// and handleDeployment maps it to the Foo's key while the sync is still running.
func sameKey() []Event {
	const x = "default/x"
	obj := func(stage Stage, kind Kind, source string) Event {
		return Event{Stage: stage, Kind: kind, Source: source, Key: x}
	}
	listener := func(kind Kind, handler, informer string) Event {
		return Event{Stage: Listener, Kind: kind, Source: handler, Informer: informer, Key: x}
	}
	work := func(stage Stage, kind Kind, reason string) Event {
		return Event{Stage: stage, Kind: kind, Source: "foos", Key: x, Reason: reason}
	}
	return []Event{
		obj(Reflector, WatchEvent, "foos"),
		obj(RealFIFO, Queued, "foos"),
		obj(Reflector, WatchEvent, "deployments"),
		obj(RealFIFO, Queued, "deployments"),
		obj(RealFIFO, Popped, "foos"),
		obj(Informer, Applied, "foos"),
		obj(Informer, FannedOut, "foos"),
		listener(Buffered, "enqueueFoo", "foos"),
		listener(HandlerCalled, "enqueueFoo", "foos"),
		work(Workqueue, Added, "new"),
		listener(HandlerReturned, "enqueueFoo", "foos"),
		work(Workqueue, Got, ""),
		obj(RealFIFO, Popped, "deployments"),
		obj(Informer, Applied, "deployments"),
		obj(Informer, FannedOut, "deployments"),
		listener(Buffered, "handleDeployment", "deployments"),
		listener(HandlerCalled, "handleDeployment", "deployments"),
		work(Controller, Reconciled, ""), // the Foo's sync ends while handleDeployment runs
		{Stage: Controller, Kind: Mapped, Source: "deployments", Key: x, Detail: x},
		work(Workqueue, Added, "dirty"),
		listener(HandlerReturned, "handleDeployment", "deployments"),
		work(Workqueue, Done, "requeued"),
		work(Workqueue, Got, ""),
		work(Controller, Reconciled, ""),
		work(Workqueue, Done, ""),
		{Stage: Reflector, Kind: Relist, Source: "deployments", Reason: "410"},
	}
}

func TestAJourneyStaysWithItsInformersObjectAndCrossesOnlyThroughAMap(t *testing.T) {
	const x = "default/x"
	events := sameKey()
	t.Run("the Foo's journey: its own stages, its work key, and the Deployment's mapping into that key, nothing else of the Deployment", func(t *testing.T) {
		assert.Equal(t, []string{
			"reflector watch event foos " + x,
			"realfifo queued foos " + x,
			"realfifo popped foos " + x,
			"informer applied foos " + x,
			"informer fanned out foos " + x,
			"listener buffered enqueueFoo " + x,
			"listener handler called enqueueFoo " + x,
			"workqueue added foos " + x,
			"listener handler returned enqueueFoo " + x,
			"workqueue got foos " + x,
			"controller reconciled foos " + x,
			"controller mapped deployments " + x,
			"workqueue added foos " + x,
			"workqueue done foos " + x,
			"workqueue got foos " + x,
			"controller reconciled foos " + x,
			"workqueue done foos " + x,
		}, lines(Journey(events, "foos", x)))
	})
	t.Run("the Deployment's journey: its own stages, then the work key from its mapping on, never the Foo's stages", func(t *testing.T) {
		assert.Equal(t, []string{
			"reflector watch event deployments " + x,
			"realfifo queued deployments " + x,
			"realfifo popped deployments " + x,
			"informer applied deployments " + x,
			"informer fanned out deployments " + x,
			"listener buffered handleDeployment " + x,
			"listener handler called handleDeployment " + x,
			// not the Foo's reconcile that ended before the mapping: an earlier cause
			"controller mapped deployments " + x,
			"workqueue added foos " + x,
			"listener handler returned handleDeployment " + x,
			"workqueue done foos " + x,
			"workqueue got foos " + x,
			"controller reconciled foos " + x,
			"workqueue done foos " + x,
		}, lines(Journey(events, "deployments", x)))
	})
	t.Run("a work key's journey: the workqueue, the syncs and the mappings into it", func(t *testing.T) {
		got := Journey(events, "", x)
		require.NotEmpty(t, got)
		for _, e := range got {
			assert.True(t, e.Stage == Workqueue || e.Kind == Reconciled || e.Kind == Mapped, "%s %s", e.Stage, e.Kind)
		}
		assert.Len(t, got, 9, "the eight workqueue and reconcile events of the key, and the mapping")
	})
	t.Run("a handler that queues nothing for the object gives it no work key", func(t *testing.T) {
		// handleDeployment for a Deployment whose Foo is not in the cache: it returns
		// without a mapping or an Add. A Foo of the same name synced afterwards is not
		// the Deployment's doing.
		ignored := []Event{
			{Stage: Reflector, Kind: WatchEvent, Source: "deployments", Key: x},
			{Stage: Listener, Kind: HandlerCalled, Source: "handleDeployment", Informer: "deployments", Key: x},
			{Stage: Listener, Kind: HandlerReturned, Source: "handleDeployment", Informer: "deployments", Key: x},
			{Stage: Workqueue, Kind: Added, Source: "foos", Key: x, Reason: "new"},
			{Stage: Controller, Kind: Reconciled, Source: "foos", Key: x},
		}
		assert.Equal(t, []string{
			"reflector watch event deployments " + x,
			"listener handler called handleDeployment " + x,
			"listener handler returned handleDeployment " + x,
		}, lines(Journey(ignored, "deployments", x)))
	})
}

func TestAFollowerFedEventByEventAgreesWithJourney(t *testing.T) {
	events := append(sameKey(),
		Event{Stage: Controller, Kind: Mapped, Source: "foos", Key: "default/x", Detail: "default/y"},
		Event{Stage: Workqueue, Kind: Added, Source: "foos", Key: "default/y"},
		Event{Stage: Controller, Kind: Mapped, Source: "configmaps", Key: "default/y", Detail: "default/z"},
		Event{Stage: Workqueue, Kind: Got, Source: "foos", Key: "default/z"},
	)
	for _, from := range []struct{ source, key string }{{"foos", "default/x"}, {"deployments", "default/x"}, {"", "default/x"}, {"", "default/y"}} {
		f := NewFollower(from.source, from.key)
		var got []Event
		for _, e := range events {
			if f.Next(e) {
				got = append(got, e)
			}
		}
		assert.Equal(t, Journey(events, from.source, from.key), got, "%s %s", from.source, from.key)
	}
	foo := Journey(events, "foos", "default/x")
	assert.Equal(t, []string{"controller mapped foos default/x", "workqueue added foos default/y"}, lines(foo[len(foo)-2:]),
		"the Foo's own mapping takes up default/y; default/y's mapping to default/z is another object's")
}

func TestTheTimelinePrintsOffsetsStagesSourcesAndSentences(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteTimeline(&b, []Event{
		at(0, Event{Stage: Reflector, Kind: WatchEvent, Source: "foos", Key: "default/example-foo", ResourceVersion: "812", Type: "MODIFIED"}),
		at(0.041, Event{Stage: DeltaFIFO, Kind: Queued, Source: "foos", Key: "default/example-foo", ResourceVersion: "812", Type: "Updated", Pending: 2, QueueLen: 1}),
		at(1.5, Event{Stage: Workqueue, Kind: RateLimited, Source: "foo-controller", Key: "default/example-foo", Duration: 10 * time.Millisecond, Requeues: 2}),
		at(120.25, Event{Stage: Workqueue, Kind: Got, Source: "foo-controller", Key: "default/example-foo", Duration: 8 * time.Millisecond}),
	}))
	assert.Equal(t, strings.Join([]string{
		"    +0.000ms  reflector  foos            watch event MODIFIED default/example-foo rv=812",
		"    +0.041ms  deltafifo  foos            queued Updated default/example-foo rv=812 (2 deltas pending, queue 1)",
		"    +1.500ms  workqueue  foo-controller  rate limited default/example-foo: retry in 10.000ms (requeue 2)",
		"  +120.250ms  workqueue  foo-controller  got default/example-foo after 8.000ms in the queue (queue 0 left)",
	}, "\n")+"\n", b.String(), "the offsets are right-aligned to the widest")
	b.Reset()
	require.NoError(t, WriteTimeline(&b, nil))
	assert.Empty(t, b.String(), "no events, no lines")
}

func TestEveryKindHasASentenceThatStartsWithItsName(t *testing.T) {
	for _, k := range []Kind{ListStarted, Listed, WatchStarted, WatchEvent, Bookmark, WatchEnded, Relist, Backoff,
		ResyncTick, ShardFiltering, ShardDropped, Queued, Replaced, DeleteDropped, Popped, Applied, FannedOut, Buffered, HandlerCalled,
		HandlerReturned, PanicRecovered, Added, AddedAfter, RateLimited, Got, Done, Forgot, ShutDown, Mapped, Reconciled,
		LeaseTried, LeaseAcquired, LeaseRenewed, LeaseLost, LeaseReleased, NewLeaderObserved, Action} {
		s := Event{Kind: k, Key: "ns/x"}.String()
		assert.True(t, strings.HasPrefix(s, string(k)), "%q starts with its kind", s)
		assert.NotContains(t, s, "%!", "%q formats cleanly", s)
	}
}

func TestAnActionSaysWhatWasDoneAndWhetherItWasAFault(t *testing.T) {
	var rec Recorder
	tr := New(rec.Record)
	tr.Action("cut every watch connection", true)
	tr.Action("POST foos default/a", false)
	var got []string
	for _, e := range rec.Events() {
		assert.Equal(t, Experiment, e.Stage)
		got = append(got, e.String())
	}
	assert.Equal(t, []string{"action (fault): cut every watch connection", "action (change): POST foos default/a"}, got)
	assert.NotPanics(t, func() { (*Tracer)(nil).Action("x", true) })
}

func TestTheSlogSinkLogsEveryEventAtDebugWithItsFacts(t *testing.T) {
	var b bytes.Buffer
	sink := Slog(slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})))
	sink(at(0, Event{Stage: Workqueue, Kind: Added, Source: "foos", Key: "ns/a", Reason: "deduplicated"}))
	sink(at(1, Event{Stage: Controller, Kind: Reconciled, Source: "foos", Key: "ns/a", Duration: time.Millisecond, Reason: errors.New("409").Error()}))
	out := b.String()
	assert.Contains(t, out, `level=DEBUG msg="added ns/a: deduplicated, already waiting" stage=workqueue kind=added source=foos key=ns/a reason=deduplicated`)
	assert.Contains(t, out, `kind=reconciled source=foos key=ns/a reason=409 duration=1ms`)

	b.Reset()
	quiet := Slog(slog.New(slog.NewTextHandler(&b, nil))) // Info: Debug records are dropped
	quiet(Event{Kind: Got})
	assert.Empty(t, b.String())
	assert.Nil(t, Slog(nil))
}

func TestARecorderWithMaxKeepsTheMostRecentEvents(t *testing.T) {
	rec := Recorder{Max: 8}
	for i := range 20 {
		rec.Record(Event{Key: fmt.Sprint(i)})
	}
	events := rec.Events()
	assert.Len(t, events, 8, "a full recorder keeps exactly Max")
	assert.Equal(t, "19", events[len(events)-1].Key, "the newest is kept")
	for i := 1; i < len(events); i++ {
		assert.Equal(t, fmt.Sprint(20-len(events)+i), events[i].Key, "in order, without gaps")
	}
	rec.Reset()
	assert.Empty(t, rec.Events())
	rec.Record(Event{Key: "after reset"})
	assert.Equal(t, []Event{{Key: "after reset"}}, rec.Events())
}

func TestAPanickingSinkLosesOnlyItsEventAndIsReported(t *testing.T) {
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	var after []Kind
	tr := New(func(Event) { panic("sink broke") }, func(e Event) { after = append(after, e.Kind) })
	for range 5 {
		require.NotPanics(t, func() { tr.Emit(Event{Stage: Listener, Kind: Buffered, Key: "ns/a"}) })
	}
	assert.Len(t, after, 5, "the sink after the panicking one gets every event")
	assert.Equal(t, 3, strings.Count(logs.String(), "trace sink panicked"), "panics 1, 2 and 4 are logged: %s", logs.String())
	assert.Contains(t, logs.String(), "sink broke")
	assert.Contains(t, logs.String(), "key=ns/a")
}
