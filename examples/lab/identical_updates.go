package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
	"github.com/kubeinternals/informers/workqueue"
)

// identicalUpdates: a one-shot controller that writes into what it watches. An
// identical write is a no-op on the server, so it goes quiet; a write that stamps a
// timestamp changes the object every time, and each sync causes the next.
func identicalUpdates() Scenario {
	return Scenario{
		Name:     "identical-updates",
		Question: "The one-shot controller (constant key): does an Update with identical content cause an update storm? What if something changes on every write?",
		Why: "The apiserver compares an update with what it stores and, when they are equal, writes nothing: the resourceVersion stays and no watch event is sent, so a controller that rewrites the same content hears nothing back and goes quiet. " +
			"Any difference — one annotation holding a timestamp — is a real write with a new resourceVersion and a MODIFIED event, which the controller's own informer hears and enqueues: each sync causes the next, " +
			"and the queue's deduplication cannot help, because the events come one at a time.",
		Read: []string{
			"docs/06-controller.md (the one-shot, constant-key pattern); examples/secret-sync/README.md (the experiment on identical PUTs)",
			"examples/secret-sync/controller/sync.go: Controller.put (why it does not storm)",
			"workqueue/queue.go: Queue.Add (deduplicated, dirty)",
		},
		Run:      runIdenticalUpdates,
		Recorded: identicalUpdatesRecorded,
	}
}

// oneShot is the scenario's one-shot controller: every event about the namespace's
// lab ConfigMaps queues the constant key "sync"; one worker recomputes the summary of
// the inputs from the cache and PUTs it into the ConfigMap "summary", which the same
// informer watches.
type oneShot struct {
	inf    *informer.SharedIndexInformer[*corev1.ConfigMap]
	queue  *workqueue.RateLimitingQueue[string]
	core   rest.Interface
	tracer *trace.Tracer
	ns     string

	mu       sync.Mutex
	stamp    bool        // write a timestamp annotation too; guarded by mu
	maxStamp int         // stamped writes allowed (the storm's bound); guarded by mu
	stamped  int         // stamped writes made; guarded by mu
	busy     bool        // a sync is running; guarded by mu
	syncs    []syncEntry // every sync, in order; guarded by mu
	errs     []error     // failed writes; guarded by mu
}

// syncEntry is one sync of the one-shot controller.
type syncEntry struct {
	Start, End time.Time
	Wrote      bool   // it PUT the summary
	Before     string // the summary's resourceVersion in the cache when it started
	After      string // the resourceVersion the PUT returned
}

const (
	oneShotKey  = "sync"
	summaryName = "summary"
	stampKey    = "kubeinternals.io/last-sync"
)

// worker runs syncs until the queue shuts down.
func (c *oneShot) worker(ctx context.Context) {
	for {
		key, shutdown := c.queue.Get()
		if shutdown {
			return
		}
		c.mu.Lock()
		c.busy = true
		c.mu.Unlock()
		start := time.Now()
		err := c.sync(ctx)
		c.tracer.Reconciled("one-shot", key, time.Since(start), err)
		if err != nil {
			c.queue.AddRateLimited(key)
		} else {
			c.queue.Forget(key)
		}
		c.mu.Lock()
		c.busy = false
		c.mu.Unlock()
		c.queue.Done(key)
	}
}

// sync writes the summary of every input ConfigMap (all lab ConfigMaps but the
// summary itself), read from the cache, into the summary ConfigMap.
func (c *oneShot) sync(ctx context.Context) error {
	e := syncEntry{Start: time.Now()}
	defer func() {
		e.End = time.Now()
		c.mu.Lock()
		c.syncs = append(c.syncs, e)
		c.mu.Unlock()
	}()
	cms, err := c.inf.Lister().Namespace(c.ns).List(labels.Everything())
	if err != nil {
		return err
	}
	var lines []string
	var cached *corev1.ConfigMap
	for _, cm := range cms {
		if cm.Name == summaryName {
			cached = cm
			continue
		}
		lines = append(lines, cm.Name+"="+cm.Data["value"])
	}
	if cached == nil {
		return errors.New("the summary ConfigMap is not in the cache")
	}
	slices.Sort(lines)
	c.mu.Lock()
	stamp := c.stamp
	if stamp && c.stamped >= c.maxStamp {
		// The storm's bound: stop writing, so the loop ends here.
		c.mu.Unlock()
		return nil
	}
	if stamp {
		c.stamped++
	}
	c.mu.Unlock()
	desired := cached.DeepCopy() // Pitfall: never modify a cached object.
	desired.Data = map[string]string{"summary": strings.Join(lines, ",")}
	if stamp {
		if desired.Annotations == nil {
			desired.Annotations = map[string]string{}
		}
		desired.Annotations[stampKey] = time.Now().UTC().Format(time.RFC3339Nano)
	}
	// Why no resourceVersion: an unconditional PUT, as secret-sync's put does — "make it
	// equal to the inputs" needs no conflict check, and a 409 would only add noise here.
	desired.ResourceVersion = ""
	e.Wrote, e.Before = true, cached.ResourceVersion
	if err := updateConfigMap(ctx, c.core, desired); err != nil {
		c.mu.Lock()
		c.errs = append(c.errs, err)
		c.mu.Unlock()
		return err
	}
	e.After = desired.ResourceVersion
	return nil
}

// since returns the syncs from index i on, and whether the controller is idle (no sync
// running, nothing queued).
func (c *oneShot) since(i int) ([]syncEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.syncs[i:]), !c.busy && c.queue.Len() == 0
}

// count is how many syncs there have been.
func (c *oneShot) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.syncs)
}

// writeErr is the first failed write, if any.
func (c *oneShot) writeErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return errors.Join(c.errs...)
}

// settledAfter waits until the syncs since index i end with an identical write (the
// returned resourceVersion is the one it started from) and the controller is idle.
func (c *oneShot) settledAfter(ctx context.Context, i int, what string) error {
	return await(ctx, awaitLong, what, func() bool {
		s, idle := c.since(i)
		return idle && len(s) > 0 && s[len(s)-1].Wrote && s[len(s)-1].After == s[len(s)-1].Before
	})
}

// runIdenticalUpdates runs the one-shot controller twice over: with writes that become
// identical (case A) and with a timestamp on every write (case B).
func runIdenticalUpdates(ctx context.Context, lab *Lab) (*Report, error) {
	const window, stormBound = 2 * time.Second, 30
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "identical-updates")
	if err != nil {
		return nil, err
	}
	for i, v := range []string{"1", "2", "3"} {
		if err := create(ctx, core, ns, "configmaps", configMap(ns, fmt.Sprintf("in-%d", i+1), "value", v)); err != nil {
			return nil, err
		}
	}
	if err := create(ctx, core, ns, "configmaps", configMap(ns, summaryName)); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMaps in-1, in-2, in-3 (data value=1,2,3) and an empty %s into %s", summaryName, ns)

	o, err := newObserved[*corev1.ConfigMap](lab, lab.Watched, configMaps(ns), informer.FactoryOptions{})
	if err != nil {
		return nil, err
	}
	defer o.stop()
	f, tracer, rec, inf := o.factory, o.tracer, o.rec, o.SharedIndexInformer
	c := &oneShot{inf: inf, core: core, tracer: tracer, ns: ns,
		queue: workqueue.NewRateLimitingQueue(workqueue.RateLimitingOptions[string]{Options: workqueue.Options{Name: "one-shot", Tracer: tracer}})}
	enqueue := func() { c.queue.Add(oneShotKey) }
	reg, err := inf.AddEventHandlerWithOptions(informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(*corev1.ConfigMap, bool) { enqueue() },
		UpdateFunc: func(_, _ *corev1.ConfigMap) { enqueue() },
		DeleteFunc: func(informer.DeletedObject[*corev1.ConfigMap]) { enqueue() },
	}, informer.HandlerOptions{Name: "enqueueSync"})
	if err != nil {
		return nil, err
	}
	f.Start(ctx)
	if err := informer.WaitForCacheSync(ctx, reg); err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	// Goroutine owned by this scenario: the worker; it exits when the queue shuts
	// down, and the scenario waits for it on every path out.
	wg.Go(func() { c.worker(ctx) })
	defer func() {
		c.queue.ShutDown()
		wg.Wait()
	}()
	r.Do("run a one-shot controller: a ConfigMap informer on %s whose handler Adds the constant key %q on every add, update and delete; "+
		"one worker computes \"in-1=…,in-2=…,in-3=…\" from the cache and PUTs it into %s (no resourceVersion: an unconditional update)", ns, oneShotKey, summaryName)
	if err := c.settledAfter(ctx, 0, "the first syncs to settle"); err != nil {
		return nil, err
	}
	initial := c.count()

	// Case A: the write is identical once the summary is up to date.
	markA := c.count()
	startA := time.Now()
	// Why each case is reported before its PUT: the recording marks where the case
	// begins, and its checks count the events after the mark.
	r.Do("case A: PUT in-1 with value=10, wait until a sync's PUT returns the resourceVersion it started from, then watch for %s", window)
	in1 := configMap(ns, "in-1", "value", "10")
	if err := updateConfigMap(ctx, core, in1); err != nil {
		return nil, err
	}
	if err := c.settledAfter(ctx, markA, "case A to settle"); err != nil {
		return nil, err
	}
	settledA := c.count()
	// A fixed observation window: we measure that nothing happens, so there is no
	// condition to wait for.
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	syncsA, _ := c.since(markA)
	inWindow := c.count() - settledA
	endA := time.Now()

	// Case B: every write stamps the time, so every write is a change.
	c.mu.Lock()
	c.stamp, c.maxStamp = true, stormBound
	c.mu.Unlock()
	markB := c.count()
	eventsMark := len(rec.Events())
	r.Do("case B: the worker now also sets annotation %s to the current time on every PUT; PUT in-1 with value=20 once, "+
		"and let the worker write at most %d times before it stops writing (our bound, not the controller's)", stampKey, stormBound)
	in1 = configMap(ns, "in-1", "value", "20")
	if err := updateConfigMap(ctx, core, in1); err != nil {
		return nil, err
	}
	// The storm ends with a sync that does not write: the one the last PUT's MODIFIED
	// event queued. Why not "idle after the last PUT": between that PUT returning and
	// its event arriving the worker is idle and the queue empty, so the count would be
	// read one event and one sync short.
	if err := await(ctx, awaitLong, "the storm to reach its bound and the last PUT's event its sync", func() bool {
		s, idle := c.since(markB)
		return idle && countWrites(s) >= stormBound && !s[len(s)-1].Wrote
	}); err != nil {
		return nil, err
	}
	if err := c.writeErr(); err != nil {
		return nil, fmt.Errorf("a summary write failed: %w", err)
	}
	syncsB, _ := c.since(markB)
	events := rec.Events()
	summaryKey := ns + "/" + summaryName
	modified := func(from, to time.Time, evs []trace.Event) int {
		return count(evs, func(e trace.Event) bool {
			return e.Kind == trace.WatchEvent && e.Type == "MODIFIED" && e.Key == summaryKey && !e.Time.Before(from) && e.Time.Before(to)
		})
	}

	writesA, changedA, noopA := countWrites(syncsA), countChanged(syncsA), countWrites(syncsA)-countChanged(syncsA)
	eventsA := modified(startA, endA, events)
	noop := lastNoop(syncsA)
	writesB, changedB := countWrites(syncsB), countChanged(syncsB)
	eventsB := modified(syncsB[0].Start, time.Now(), events[eventsMark:])
	stormTook := lastWrite(syncsB).End.Sub(syncsB[0].Start)
	rate := float64(writesB) / stormTook.Seconds()

	r.See("before case A: %d syncs to settle after the start (the first PUT filled in the summary, the next was identical)", initial)
	r.See("case A, from the PUT of in-1 to the end of the window:")
	r.Timeline(trace.Filter(events, func(e trace.Event) bool {
		return !e.Time.Before(startA) && e.Time.Before(endA) && (e.Kind == trace.WatchEvent || e.Stage == trace.Workqueue || e.Kind == trace.Reconciled)
	}))
	r.See("case A: %d syncs, %d PUTs of the summary (changing: %d, identical: %d — it started from rv %s and the server returned rv %s); "+
		"MODIFIED events for %s: %d; syncs in the %s after: %d",
		len(syncsA), writesA, changedA, noopA, noop.Before, noop.After, summaryName, eventsA, window, inWindow)
	r.See("case B, its first 12 events:")
	r.Timeline(firstN(trace.Filter(events[eventsMark:], func(e trace.Event) bool {
		return e.Kind == trace.WatchEvent || e.Stage == trace.Workqueue || e.Kind == trace.Reconciled
	}), 12))
	r.See("case B: one change to in-1 led to %d syncs and %d PUTs in %s (%.0f writes/s), %d of them with a new resourceVersion; MODIFIED events for %s: %d",
		len(syncsB), writesB, stormTook.Round(time.Millisecond), rate, changedB, summaryName, eventsB)

	r.Check("case A: the identical PUT kept the resourceVersion", noopA == 1 && noop.After == noop.Before,
		"identical PUTs: %d; rv %s → %s", noopA, noop.Before, noop.After)
	r.Check("case A: only the PUT that changed the summary produced a watch event", eventsA == changedA && changedA == 1,
		"MODIFIED events: %d; PUTs that changed it: %d", eventsA, changedA)
	r.Check("case A: the controller went quiet: one sync for the change, one for its own write, none after",
		len(syncsA) == 2 && inWindow == 0, "syncs: %d; in the %s after: %d", len(syncsA), window, inWindow)
	r.Check("case B: every stamped PUT got a new resourceVersion", writesB == stormBound && changedB == writesB,
		"%d of %d", changedB, writesB)
	r.Check("case B: every stamped PUT came back as a MODIFIED event that queued the next sync",
		eventsB == writesB && len(syncsB) == writesB+1, "MODIFIED events: %d; syncs: %d; PUTs: %d", eventsB, len(syncsB), writesB)
	r.Answer = fmt.Sprintf("an identical Update is a no-op: the server kept rv %s, sent no event, and the controller went quiet after %d syncs; "+
		"a write that changes on every sync (a timestamp) is a storm: one change led to %d syncs in %s (%.0f writes/s), stopped only by our bound of %d",
		noop.After, len(syncsA), len(syncsB), stormTook.Round(time.Millisecond), rate, stormBound)
	return r, nil
}

// countWrites counts the syncs that PUT the summary.
func countWrites(s []syncEntry) int {
	n := 0
	for _, e := range s {
		if e.Wrote {
			n++
		}
	}
	return n
}

// countChanged counts the PUTs that got a new resourceVersion.
func countChanged(s []syncEntry) int {
	n := 0
	for _, e := range s {
		if e.Wrote && e.After != e.Before {
			n++
		}
	}
	return n
}

// lastNoop is the last identical PUT (zero if none).
func lastNoop(s []syncEntry) syncEntry {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i].Wrote && s[i].After == s[i].Before {
			return s[i]
		}
	}
	return syncEntry{}
}

// lastWrite is the last sync that PUT the summary (zero if none).
func lastWrite(s []syncEntry) syncEntry {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i].Wrote {
			return s[i]
		}
	}
	return syncEntry{}
}

// firstN keeps the first n events.
func firstN(events []trace.Event, n int) []trace.Event {
	return events[:min(n, len(events))]
}

// identicalUpdatesRecorded: in case A the controller went quiet after its one
// write; in case B every stamped write came back as a watch event.
func identicalUpdatesRecorded(r recorded) Check {
	caseA := r.after("case A:").before("case B:").of(trace.WatchEvent)
	caseB := r.after("case B:").of(trace.WatchEvent).about("/summary")
	return check("case A: two watch events (the input's change, one summary write), then quiet; case B: a stream of summary writes",
		len(caseA) == 2 && len(caseB) >= 10, "case A: %d watch events; case B: %d summary MODIFIED", len(caseA), len(caseB))
}
