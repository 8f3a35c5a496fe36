package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
)

// transformScenario: a transform that strips managedFields runs once per object, as
// the queue takes it; the cache and the handlers get only its result; one that fails
// loses that one watch event.
func transformScenario() Scenario {
	return Scenario{
		Name:     "transform",
		Question: "SetTransform: when does the transform run, what does the cache get, and what happens when it fails?",
		Why: "The queue runs the transform inside its own Add, Update, Delete or Replace, on the reflector's goroutine and under the queue's lock (RealFIFO.event, RealFIFO.Replace): " +
			"after the reflector has read the watch event's key and resourceVersion and before the delta is queued — for a watch-list, when the end bookmark hands the buffered objects to Replace — " +
			"so the cache, every handler and every Lister only ever see what it returned, and a resync, which replays cached objects (one SyncAll), runs it no more. " +
			"An error, or a nil result, is ErrTransform: for a watch event nothing is queued and the reflector logs it and goes on, so that one event is lost and the cache keeps the object's last good state until an event or a relist brings one the transform accepts; " +
			"in a Replace an error fails the whole list, which is retried with backoff.",
		Read: []string{
			"docs/04-informer.md (The transform: the one place an object may be changed) and docs/faq.md #10",
			"deltafifo/real_fifo.go: RealFIFO.event, RealFIFO.Replace",
			"deltafifo/delta_fifo.go: applyTransform",
			"reflector/watch.go: Reflector.applyEvent (a rejected event is logged, not retried)",
			"informer/informer.go: SharedIndexInformer.SetTransform",
		},
		Run:      runTransform,
		Recorded: transformRecorded,
	}
}

// rejectAnnotation makes the scenario's transform refuse an object.
const rejectAnnotation = "kubeinternals.io/transform"

// rejectDo is how the scenario's refused write is described; the recording is read
// after it.
const rejectDo = "PUT live with the annotation " + rejectAnnotation + ": reject"

// transformCall is one call of the scenario's transform.
type transformCall struct {
	at      time.Time
	key, rv string
	managed int   // managedFields entries of the object it was given
	err     error // what it returned
}

// stripper is the scenario's transform: it clears managedFields and records every
// call; an object annotated rejectAnnotation=reject is refused.
type stripper struct {
	mu    sync.Mutex
	calls []transformCall // guarded by mu
}

// transform may change cm in place: the queue hands it an object no one else holds yet.
func (s *stripper) transform(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	c := transformCall{at: time.Now(), key: indexer.ObjectKey(cm.Namespace, cm.Name), rv: cm.ResourceVersion, managed: len(cm.ManagedFields)}
	if cm.Annotations[rejectAnnotation] == "reject" {
		c.err = fmt.Errorf("refusing %s: annotated %s", c.key, rejectAnnotation)
	} else {
		cm.ManagedFields = nil
	}
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	return cm, nil
}

// all returns the calls so far.
func (s *stripper) all() []transformCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]transformCall(nil), s.calls...)
}

// called returns a condition: the transform has been called for key at rv.
func (s *stripper) called(key, rv string) func() bool {
	return func() bool {
		for _, c := range s.all() {
			if c.key == key && c.rv == rv {
				return true
			}
		}
		return false
	}
}

// runTransform sets a managedFields-stripping transform on an informer, lets it list
// two ConfigMaps, adds one, has the transform refuse one of its updates, writes it
// again, and waits for a resync.
func runTransform(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "transform")
	if err != nil {
		return nil, err
	}
	if err := createConfigMaps(ctx, core, ns, "listed", 2, "v", "1"); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMaps listed-0 and listed-1 into %s", ns)

	logs := &lockedBuffer{}
	o, err := newObserved[*corev1.ConfigMap](lab, lab.Watched, configMaps(ns), informer.FactoryOptions{
		ResyncPeriod: resyncEvery, Logger: lab.logTo(logs, slog.LevelWarn),
	})
	if err != nil {
		return nil, err
	}
	defer o.stop()
	f, rec, inf := o.factory, o.rec, o.SharedIndexInformer
	tf := &stripper{}
	if err := inf.SetTransform(tf.transform); err != nil {
		return nil, err
	}
	seen := &callRecorder[*corev1.ConfigMap]{}
	reg, err := inf.AddEventHandlerWithOptions(seen.handler(), informer.HandlerOptions{Name: "sees"})
	if err != nil {
		return nil, err
	}
	f.Start(ctx)
	if err := informer.WaitForCacheSync(ctx, inf, reg); err != nil {
		return nil, err
	}
	r.Do("start a ConfigMap informer (resync every %s) whose transform, set with SetTransform before Start, clears managedFields and records each call, "+
		"and returns an error for an object annotated %s: reject; one handler, \"sees\", records what it is given", resyncEvery, rejectAnnotation)

	key := ns + "/live"
	live := configMap(ns, "live", "v", "1")
	r.Do("POST ConfigMap live, and wait until the cache has it")
	if err := createAndAwait(ctx, core, o, "configmaps", live); err != nil {
		return nil, err
	}

	refused := live.DeepCopy()
	refused.Annotations = map[string]string{rejectAnnotation: "reject"}
	refused.Data = map[string]string{"v": "2"}
	r.Do("%s and data v: 2; wait until the transform has refused it", rejectDo)
	if err := updateConfigMap(ctx, core, refused); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "the transform to refuse live's update", func() bool {
		return tf.called(key, refused.ResourceVersion)() && len(logs.linesWith("store rejected a watch event", key)) > 0
	}); err != nil {
		return nil, err
	}
	kept, _, _ := inf.Indexer().GetByKey(key)
	keptRV := ""
	if kept != nil {
		keptRV = kept.ResourceVersion
	}

	again := refused.DeepCopy()
	again.Annotations = nil
	again.Data = map[string]string{"v": "3"}
	r.Do("PUT live again without the annotation, data v: 3; wait until the handler has it")
	if err := updateConfigMap(ctx, core, again); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "the handler to get live's second update", func() bool {
		for _, c := range seen.all() {
			if c.kind == "update" && c.newRV == again.ResourceVersion {
				return true
			}
		}
		return false
	}); err != nil {
		return nil, err
	}
	changedAt := time.Now()
	resyncUpdates := func() int {
		n := 0
		for _, c := range seen.all() {
			if c.at.After(changedAt) && c.kind == "update" && c.oldRV == c.newRV {
				n++
			}
		}
		return n
	}
	r.Do("wait for a resync to reach the handler")
	if err := await(ctx, awaitLong, "a resync of the 3 ConfigMaps", func() bool { return resyncUpdates() >= 3 }); err != nil {
		return nil, err
	}

	events := rec.Events()
	calls := tf.all()
	handled := seen.all()
	var cachedManaged, cachedObjects int
	for _, cm := range inf.Indexer().List() {
		cachedObjects++
		cachedManaged += len(cm.ManagedFields)
	}

	// Each call's place among the trace's events.
	r.See("each transform call, placed among the trace's events (offsets from the watch event that brought the object):")
	ordered, inList, live0 := 0, 0, 0
	for _, c := range calls {
		line, ok, listed := placeCall(events, c)
		r.See("  %s", line)
		if ok {
			ordered++
		}
		if listed {
			inList++
		} else {
			live0++
		}
	}
	managedIn := 0
	for _, c := range calls {
		managedIn = max(managedIn, c.managed)
	}
	managedOut := 0
	for _, c := range handled {
		managedOut += c.managed
	}
	r.See("managedFields entries: up to %d in each object the transform was given; %d in the %d cached objects, %d in the %d handler calls",
		managedIn, cachedManaged, cachedObjects, managedOut, len(handled))
	for _, l := range logs.linesWith("store rejected a watch event") {
		r.See("log: %s", withoutTime(l))
	}
	var nextUpdate *handlerCall
	for i, c := range handled {
		if c.name == "live" && c.kind == "update" && c.oldRV != c.newRV {
			nextUpdate = &handled[i]
			break
		}
	}
	next := "(none)"
	if nextUpdate != nil {
		next = fmt.Sprintf("OnUpdate(rv %s → %s)", nextUpdate.oldRV, nextUpdate.newRV)
	}
	atRefused := 0
	for _, c := range handled {
		if c.newRV == refused.ResourceVersion || c.oldRV == refused.ResourceVersion {
			atRefused++
		}
	}
	queuedRefused := count(events, func(e trace.Event) bool {
		return e.Kind == trace.Queued && e.Key == key && e.ResourceVersion == refused.ResourceVersion
	})
	sinceChange := 0
	for _, c := range calls {
		if c.at.After(changedAt) {
			sinceChange++
		}
	}
	resyncs := resyncUpdates()
	r.See("after the refused event the cache still held live at rv %s; the handler's next change of live: %s; since then: %d resync updates, %d transform calls",
		keptRV, next, resyncs, sinceChange)

	r.Check("the transform ran once per object the queue took: the 2 listed when the watch-list's end bookmark handed them to Replace, each of live's 3 events between its watch event and its queued delta",
		len(calls) == 5 && inList == 2 && live0 == 3 && ordered == 5, "%d calls (%d listed, %d live), %d in that place", len(calls), inList, live0, ordered)
	r.Check("the cache and the handler got only what the transform returned: no managedFields", managedIn > 0 && cachedManaged == 0 && managedOut == 0 && cachedObjects == 3,
		"given up to %d entries; %d in the cache, %d in handler calls", managedIn, cachedManaged, managedOut)
	logged := logs.linesWith("store rejected a watch event", key)
	r.Check("the refused event was logged and lost: nothing queued at its resourceVersion, the cache kept the last good state, the handler never saw it",
		len(logged) == 1 && queuedRefused == 0 && keptRV == live.ResourceVersion && atRefused == 0, "%d log line(s), %d queued at rv %s; cache at rv %s; %d handler calls about rv %s",
		len(logged), queuedRefused, refused.ResourceVersion, keptRV, atRefused, refused.ResourceVersion)
	r.Check("the next event repaired it: the handler's update went from the last good state straight to it",
		nextUpdate != nil && nextUpdate.oldRV == live.ResourceVersion && nextUpdate.newRV == again.ResourceVersion, "%s", next)
	r.Check("a resync ran no transform", resyncs >= 3 && sinceChange == 0, "%d resync updates, %d transform calls", resyncs, sinceChange)
	r.Answer = fmt.Sprintf("once per object, as the queue takes it: %d calls — the 2 listed ConfigMaps when the watch-list's end bookmark handed them to Replace, each of live's events between its watch event and its queued delta, "+
		"none for %d resync updates; the cache and the handler got only its result (managedFields %d → 0); the event it refused (rv %s) was logged and never queued, the cache kept rv %s, and the handler went from rv %s to %s",
		len(calls), resyncs, managedIn, refused.ResourceVersion, keptRV, live.ResourceVersion, again.ResourceVersion)
	return r, nil
}

// placeCall describes c among the trace's events: the watch event that brought the
// object, for a listed object the watch-list's Listed (its end bookmark reached),
// the call, and the delta it queued, the cache write and the handler call. ok: the
// call came after the watch event (and Listed) and before its delta; listed: the
// object came in the watch-list.
func placeCall(events []trace.Event, c transformCall) (line string, ok, listed bool) {
	var watched, listedAt, queued, applied, handled *trace.Event
	for i := range events {
		e := &events[i]
		switch {
		case e.Kind == trace.WatchEvent && e.Key == c.key && e.ResourceVersion == c.rv && !e.Time.After(c.at):
			watched = e
		case e.Kind == trace.Listed && e.Type == "watch-list" && watched != nil && !e.Time.After(c.at):
			listedAt = e
		case e.Time.Before(c.at):
		case queued == nil && e.Kind == trace.Queued && (e.Type == "ReplacedAll" && listedAt != nil || e.Key == c.key && e.ResourceVersion == c.rv):
			queued = e
		case queued != nil && applied == nil && e.Kind == trace.Applied && e.Key == c.key && e.ResourceVersion == c.rv:
			applied = e
		case applied != nil && handled == nil && e.Kind == trace.HandlerCalled && e.Key == c.key && e.ResourceVersion == c.rv:
			handled = e
		}
	}
	_, name, _ := strings.Cut(c.key, "/")
	if watched == nil {
		return fmt.Sprintf("%s rv=%s: transform called with no watch event before it", name, c.rv), false, false
	}
	at := func(e *trace.Event) string { return trace.Offset(e.Time.Sub(watched.Time)) }
	parts := []string{fmt.Sprintf("watch event %s %s", watched.Type, at(watched))}
	if listedAt != nil {
		parts = append(parts, "listed (the end bookmark) "+at(listedAt))
	}
	call := "transform " + trace.Offset(c.at.Sub(watched.Time))
	if c.err != nil {
		call += " → error: " + c.err.Error()
	}
	parts = append(parts, call)
	if queued != nil && c.err == nil {
		what := "queued " + queued.Type
		parts = append(parts, what+" "+at(queued))
		if applied != nil {
			parts = append(parts, "applied "+applied.Type+" "+at(applied))
		}
		if handled != nil {
			parts = append(parts, "handler "+handled.Type+" "+at(handled))
		}
	} else {
		parts = append(parts, "nothing queued")
	}
	ok = (c.err == nil) == (queued != nil)
	return fmt.Sprintf("%s rv=%s: %s", name, c.rv, strings.Join(parts, " → ")), ok, listedAt != nil
}

// transformRecorded: after the refused write, live's first watch event queued
// nothing and reached neither the cache nor the handler; its next one did all three.
func transformRecorded(r recorded) Check {
	after := r.after(rejectDo).about("/live")
	watched := after.of(trace.WatchEvent)
	at := func(rv string, k trace.Kind) int {
		return len(after.of(k).where(func(e trace.Event) bool { return e.ResourceVersion == rv }))
	}
	if len(watched) < 2 {
		return check("live's refused event queued nothing; its next was queued, applied and handled", false, "%d watch events for live after the refused write", len(watched))
	}
	refused, next := watched[0].ResourceVersion, watched[1].ResourceVersion
	logged := len(r.after(rejectDo).of(trace.Logged).where(func(e trace.Event) bool {
		return e.Type == "ERROR" && strings.Contains(e.Detail, "store rejected a watch event") && strings.Contains(e.Attrs, "/live")
	}))
	return check("live's refused event queued nothing, reached neither the cache nor the handler, and was logged; its next was queued, applied and handled",
		at(refused, trace.Queued) == 0 && at(refused, trace.Applied) == 0 && at(refused, trace.HandlerCalled) == 0 && logged == 1 &&
			at(next, trace.Queued) == 1 && at(next, trace.Applied) == 1 && at(next, trace.HandlerCalled) >= 1,
		"rv %s: queued %d, applied %d, handled %d, logged %d; rv %s: queued %d, applied %d, handled %d",
		refused, at(refused, trace.Queued), at(refused, trace.Applied), at(refused, trace.HandlerCalled), logged,
		next, at(next, trace.Queued), at(next, trace.Applied), at(next, trace.HandlerCalled))
}
