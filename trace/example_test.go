package trace_test

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/kubeinternals/informers/trace"
	"github.com/kubeinternals/informers/workqueue"
)

// A tracer with a Recorder sink, attached to a workqueue: the trace shows the
// deduplicated Add and the item marked dirty while a worker processes it.
func ExampleNew() {
	var rec trace.Recorder
	q := workqueue.NewQueue[string](workqueue.Options{Name: "foos", Tracer: trace.New(rec.Record)})
	q.Add("default/example-foo")
	q.Add("default/example-foo")
	key, _ := q.Get()
	q.Add(key)
	q.Done(key)

	for _, e := range rec.Events() {
		// e.String() is the whole sentence; its times differ from run to run.
		fmt.Printf("%s %s %s %q\n", e.Stage, e.Kind, e.Key, e.Reason)
	}
	// Output:
	// workqueue added default/example-foo "new"
	// workqueue added default/example-foo "deduplicated"
	// workqueue got default/example-foo ""
	// workqueue added default/example-foo "dirty"
	// workqueue done default/example-foo "requeued"
}

// Journey picks one object's events out of a whole pipeline's — here a Deployment's,
// leaving out the Foo of the same name — and follows the workqueue key a handler
// mapped it to; WriteTimeline prints them with offsets from the first.
func ExampleJourney() {
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	ms := func(f float64) time.Time { return start.Add(time.Duration(f * float64(time.Millisecond))) }
	events := []trace.Event{
		{Time: ms(0), Stage: trace.Reflector, Kind: trace.WatchEvent, Source: "deployments", Key: "default/example-foo", Type: "MODIFIED", ResourceVersion: "905"},
		{Time: ms(0.01), Stage: trace.Reflector, Kind: trace.WatchEvent, Source: "foos", Key: "default/example-foo", Type: "MODIFIED", ResourceVersion: "904"},
		{Time: ms(0.02), Stage: trace.Reflector, Kind: trace.WatchEvent, Source: "deployments", Key: "default/other", Type: "MODIFIED", ResourceVersion: "906"},
		{Time: ms(0.03), Stage: trace.DeltaFIFO, Kind: trace.Queued, Source: "deployments", Key: "default/example-foo", Type: "Updated", ResourceVersion: "905", Pending: 1, QueueLen: 1},
		{Time: ms(0.2), Stage: trace.Controller, Kind: trace.Mapped, Source: "deployments", Key: "default/example-foo", Detail: "default/example-foo"},
		{Time: ms(0.21), Stage: trace.Workqueue, Kind: trace.Added, Source: "foos", Key: "default/example-foo", Reason: "new", QueueLen: 1},
	}
	_ = trace.WriteTimeline(os.Stdout, trace.Journey(events, "deployments", "default/example-foo"))
	// Output:
	//   +0.000ms  reflector   deployments  watch event MODIFIED default/example-foo rv=905
	//   +0.030ms  deltafifo   deployments  queued Updated default/example-foo rv=905 (1 delta pending, queue 1)
	//   +0.200ms  controller  deployments  mapped deployments default/example-foo to key default/example-foo
	//   +0.210ms  workqueue   foos         added default/example-foo: new (queue 1)
}

// The slog adapter logs each event as a Debug record, for pipelines that already
// collect logs.
func ExampleSlog() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // keep the output stable
			}
			return a
		},
	}))
	tr := trace.New(trace.Slog(logger))
	tr.Map("deployments", "default/example-foo", "default/example-foo")
	// Output:
	// level=DEBUG msg="mapped deployments default/example-foo to key default/example-foo" stage=controller kind=mapped source=deployments key=default/example-foo detail=default/example-foo
}
