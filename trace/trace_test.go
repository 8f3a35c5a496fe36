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

func TestJourneyFollowsAKeyIntoTheWorkqueueKeysItWasMappedTo(t *testing.T) {
	events := []Event{
		{Stage: Reflector, Kind: WatchEvent, Source: "deployments", Key: "ns/web-abc", Type: "MODIFIED"},
		{Stage: Reflector, Kind: WatchEvent, Source: "deployments", Key: "ns/other", Type: "MODIFIED"},
		{Stage: Workqueue, Kind: Added, Source: "foos", Key: "ns/web", Reason: "new"}, // before the mapping: another cause
		{Stage: Listener, Kind: HandlerCalled, Source: "deployments handler 1", Key: "ns/web-abc", Type: "update"},
		{Stage: Controller, Kind: Mapped, Source: "deployments", Key: "ns/web-abc", Detail: "ns/web"},
		{Stage: Workqueue, Kind: Added, Source: "foos", Key: "ns/web", Reason: "dirty"},
		{Stage: Listener, Kind: HandlerCalled, Source: "deployments handler 1", Key: "ns/other", Type: "update"},
		{Stage: Workqueue, Kind: Got, Source: "foos", Key: "ns/web"},
		{Stage: Reflector, Kind: Relist, Reason: "410"}, // keyless: in nobody's journey
	}
	var kinds []string
	for _, e := range Journey(events, "ns/web-abc") {
		kinds = append(kinds, string(e.Kind)+" "+e.Key)
	}
	assert.Equal(t, []string{
		"watch event ns/web-abc", "handler called ns/web-abc", "mapped ns/web-abc", "added ns/web", "got ns/web",
	}, kinds)
}

func TestAFollowerFedEventByEventAgreesWithJourney(t *testing.T) {
	events := []Event{
		{Kind: WatchEvent, Key: "ns/a"},
		{Kind: Added, Key: "ns/b"},
		{Kind: Mapped, Key: "ns/a", Detail: "ns/b"},
		{Kind: Added, Key: "ns/b"},
		{Kind: Relist},
		{Kind: Mapped, Key: "ns/b", Detail: "ns/c"},
		{Kind: Got, Key: "ns/c"},
	}
	f := NewFollower("ns/a")
	var got []Event
	for _, e := range events {
		if f.Next(e) {
			got = append(got, e)
		}
	}
	assert.Equal(t, Journey(events, "ns/a"), got)
	assert.Len(t, got, 5, "a, the mapping, b after it, b's mapping, c after it")
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
		ResyncTick, Queued, Replaced, DeleteDropped, Popped, Applied, FannedOut, Buffered, HandlerCalled,
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
	assert.LessOrEqual(t, len(events), 8)
	assert.Equal(t, "19", events[len(events)-1].Key, "the newest is kept")
	for i := 1; i < len(events); i++ {
		assert.Equal(t, fmt.Sprint(20-len(events)+i), events[i].Key, "in order, without gaps")
	}
	rec.Reset()
	assert.Empty(t, rec.Events())
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
