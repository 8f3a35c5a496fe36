package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/trace"
)

// deltaTypes: one object's life through the DeltaFIFO (the classic pipeline, chosen
// by name), each change with its delta type, and the handler call each type becomes.
func deltaTypes() Scenario {
	return Scenario{
		Name:     "delta-types",
		Question: "Why does each delta carry a type?",
		Pipeline: "classic — DeltaFIFO fed by a paged LIST, chosen by name (FactoryOptions{Queue: informer.DeltaFIFOQueue, InitialList: reflector.PagedList}), because the delta types are DeltaFIFO's. " +
			"The default RealFIFO queues the same Added, Updated and Deleted deltas for watch events, but a relist as one ReplacedAll and a resync as one SyncAll for the whole cache, " +
			"which the informer diffs against its cache to produce the same handler calls.",
		Why: "Because the queue must tell the informer what to do to its cache, and the same object arrives in five ways: a watch ADDED, MODIFIED or DELETED event (Added, Updated, Deleted), " +
			"a periodic resync re-delivering what the cache holds (Sync), and a full LIST after the watch could not resume (Replaced), which may or may not carry a change. " +
			"The informer turns Added, Updated, Sync and Replaced into an add or an update depending on whether the cache already has the object, and an update with an unchanged resourceVersion is a resync that reaches only handlers due one; Deleted becomes a delete, with a tombstone when a relist inferred it.",
		Read: []string{
			"docs/02-deltafifo.md (Walk through the code) and docs/04-informer.md (Resync)",
			"deltafifo/delta.go: DeltaType; deltafifo/delta_fifo_replace.go: DeltaFIFO.Replace, DeltaFIFO.Resync",
			"informer/deltas.go: SharedIndexInformer.applyDelta, SharedIndexInformer.distributeUpdate",
		},
		Fault:    "refuses the informer's connections, compacts etcd, then lets it reconnect (its re-watch gets 410 Gone)",
		Run:      runDeltaTypes,
		Recorded: deltaTypesRecorded,
	}
}

// runDeltaTypes takes one PodTemplate through create, update, a resync, a relist
// forced by compaction, and delete, and zips its deltas with the handler's calls.
func runDeltaTypes(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "delta-types")
	if err != nil {
		return nil, err
	}
	// Why the handler is due at every relist: its period equals the informer's check
	// period, and the reflector restarts its resync timer after each check, so every
	// check finds the handler due (informer/processor.go shouldResync).
	o, err := newObserved[*corev1.PodTemplate](lab, lab.Watched, labelled(ns, "podtemplates"), informer.FactoryOptions{
		ResyncPeriod: resyncEvery, Queue: informer.DeltaFIFOQueue, InitialList: reflector.PagedList,
	})
	if err != nil {
		return nil, err
	}
	defer o.stop()
	f, rec, inf := o.factory, o.rec, o.SharedIndexInformer
	calls := &callRecorder[*corev1.PodTemplate]{}
	reg, err := inf.AddEventHandlerWithOptions(calls.handler(), informer.HandlerOptions{Name: "recorder"})
	if err != nil {
		return nil, err
	}
	f.Start(ctx)
	if err := informer.WaitForCacheSync(ctx, inf, reg); err != nil {
		return nil, err
	}
	r.Do("start a PodTemplate informer on the empty namespace %s, resync every %s, with one handler recording its calls", ns, resyncEvery)

	const name = "tracked"
	key := ns + "/" + name
	pt := podTemplate(ns, name)
	if err := create(ctx, core, ns, "podtemplates", pt); err != nil {
		return nil, err
	}
	r.Do("POST PodTemplate %s (rv %s)", name, pt.ResourceVersion)
	if err := await(ctx, awaitLong, "the handler's add", calls.has(name, func(c handlerCall) bool { return c.kind == "add" })); err != nil {
		return nil, err
	}
	pt.Annotations = map[string]string{"step": "changed"}
	if err := core.Put().Namespace(ns).Resource("podtemplates").Name(name).Body(pt).Do(ctx).Into(pt); err != nil {
		return nil, err
	}
	r.Do("PUT it with an annotation (rv %s)", pt.ResourceVersion)
	changedRV := pt.ResourceVersion
	if err := await(ctx, awaitLong, "the handler's update", calls.has(name, func(c handlerCall) bool { return c.kind == "update" && c.newRV == changedRV })); err != nil {
		return nil, err
	}
	queuedFor := func(t string) func() bool {
		return func() bool {
			return count(rec.Events(), func(e trace.Event) bool { return e.Kind == trace.Queued && e.Key == key && e.Type == t }) > 0
		}
	}
	if err := await(ctx, awaitLong, "a resync", queuedFor("Sync")); err != nil {
		return nil, err
	}
	r.Do("wait for a resync")

	// The relist: while the informer cannot reach the server, write twice (so that the
	// informer's resourceVersion falls strictly behind the compaction) and compact.
	accept, err := lab.Refuse()
	if err != nil {
		return nil, err
	}
	refusedAt := time.Now()
	r.Fault("refuse the informer's connections")
	for i := range 2 {
		if err := create(ctx, core, ns, "podtemplates", podTemplate(ns, fmt.Sprintf("other-%d", i))); err != nil {
			_ = accept()
			return nil, err
		}
	}
	rev, err := lab.CompactEtcd(ctx)
	if err != nil {
		_ = accept()
		return nil, err
	}
	if err := accept(); err != nil {
		return nil, err
	}
	r.Do("meanwhile POST PodTemplates other-0 and other-1, compact etcd at revision %d, then accept connections again", rev)
	if err := await(ctx, awaitLong, "the relist's Replaced delta", queuedFor("Replaced")); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "the handler's call for the Replaced delta", func() bool {
		return len(calls.of(name)) == count(rec.Events(), func(e trace.Event) bool { return e.Kind == trace.Queued && e.Key == key })
	}); err != nil {
		return nil, err
	}
	if err := deleteObject(ctx, core, "podtemplates", ns, name); err != nil {
		return nil, err
	}
	r.Do("DELETE %s", name)
	if err := await(ctx, awaitLong, "the handler's delete", calls.has(name, func(c handlerCall) bool { return c.kind == "delete" })); err != nil {
		return nil, err
	}

	events := rec.Events()
	queued := trace.Filter(events, func(e trace.Event) bool { return e.Kind == trace.Queued && e.Key == key })
	got := calls.of(name)
	relists := trace.Filter(events, func(e trace.Event) bool { return e.Kind == trace.Relist && e.Time.After(refusedAt) })
	replaces := trace.Filter(events, func(e trace.Event) bool { return e.Kind == trace.Replaced && e.Time.After(refusedAt) })

	// The timeline: the object's deltas (a run of resyncs shown once) and what the
	// reflector did between the refusal and the relist.
	var shown []trace.Event
	lastSync := false
	for _, e := range events {
		switch {
		case e.Kind == trace.Queued && e.Key == key:
			if e.Type == "Sync" && lastSync {
				continue
			}
			lastSync = e.Type == "Sync"
			shown = append(shown, e)
		case e.Time.After(refusedAt) && len(replaces) > 0 && !e.Time.After(replaces[0].Time) &&
			(e.Stage == trace.Reflector && e.Kind != trace.ResyncTick && e.Kind != trace.WatchEvent || e.Kind == trace.Replaced):
			shown = append(shown, e)
		}
	}
	r.Timeline(shown)

	// Delta → handler call, zipped: one notification per delta, in order.
	r.See("each delta for %s and the handler call it became (runs of the same type counted):", name)
	matches := len(queued) == len(got)
	expect := map[string]func(handlerCall) bool{
		"Added":    func(c handlerCall) bool { return c.kind == "add" && !c.initial },
		"Updated":  func(c handlerCall) bool { return c.kind == "update" && c.oldRV != c.newRV },
		"Sync":     func(c handlerCall) bool { return c.kind == "update" && c.oldRV == c.newRV },
		"Replaced": func(c handlerCall) bool { return c.kind == "update" && c.oldRV == c.newRV },
		"Deleted":  func(c handlerCall) bool { return c.kind == "delete" && !c.stone },
	}
	var mismatches []string
	for i := 0; i < len(queued) && i < len(got); {
		j := i
		for j < len(queued) && j < len(got) && queued[j].Type == queued[i].Type && got[j].String() == got[i].String() {
			j++
		}
		r.See("  %-8s rv=%-5s ×%d → %s", queued[i].Type, queued[i].ResourceVersion, j-i, got[i])
		for k := i; k < j; k++ {
			if ok := expect[queued[k].Type]; ok == nil || !ok(got[k]) || queued[k].ResourceVersion != rvOfCall(got[k]) {
				mismatches = append(mismatches, fmt.Sprintf("%s→%s", queued[k].Type, got[k]))
			}
		}
		i = j
	}
	types := compact(queued)
	r.See("the relist: %s; it queued a Replaced delta for each of the %d listed PodTemplates", firstReason(relists), replacedItems(replaces))

	order := []string{"Added", "Updated", "Sync", "Replaced", "Deleted"}
	r.Check("the object's deltas carried each type in the order of its life: Added, Updated, Sync, Replaced, Deleted", inOrder(types, order),
		"delta types: %s", strings.Join(types, ", "))
	r.Check("the handler got exactly one call per delta", matches, "%d deltas, %d calls", len(queued), len(got))
	r.Check("Added → OnAdd; Updated → OnUpdate with a new rv; Sync and Replaced (unchanged) → OnUpdate with the same rv; Deleted → OnDelete without a tombstone",
		matches && len(mismatches) == 0, "%d mismatches %v", len(mismatches), mismatches)
	r.Check("the Replaced deltas came from a relist forced by 410 Gone", len(relists) > 0 && strings.Contains(relists[0].Reason, "410") && len(replaces) > 0,
		"%s", firstReason(relists))
	r.Answer = fmt.Sprintf("because one object reaches the queue in five ways that each need their own treatment: its deltas were %s, and the handler got %s",
		strings.Join(types, ", "), describeCalls(queued, got))
	return r, nil
}

// rvOfCall is the resourceVersion the call delivered: the new one, or a deleted object's.
func rvOfCall(c handlerCall) string {
	if c.kind == "delete" {
		return c.oldRV
	}
	return c.newRV
}

// compact is the delta types of events with runs of the same type collapsed.
func compact(events []trace.Event) []string {
	var out []string
	for _, e := range events {
		if len(out) == 0 || out[len(out)-1] != e.Type {
			out = append(out, e.Type)
		}
	}
	return out
}

// inOrder reports whether each of want first appears in types in want's order, and
// the last of want is the last type.
func inOrder(types, want []string) bool {
	prev := -1
	for _, w := range want {
		i := slices.Index(types, w)
		if i <= prev {
			return false
		}
		prev = i
	}
	return len(types) > 0 && types[len(types)-1] == want[len(want)-1]
}

// firstReason is the first relist event's Reason, or "(no relist)".
func firstReason(events []trace.Event) string {
	if len(events) == 0 {
		return "(no relist)"
	}
	return events[0].Reason
}

// replacedItems is the Items of the first Replaced event (0 if none).
func replacedItems(events []trace.Event) int {
	if len(events) == 0 {
		return 0
	}
	return events[0].Items
}

// describeCalls names, for each delta type in queued, the handler call its first
// delta became: "Added → add, Updated → update (new rv), …".
func describeCalls(queued []trace.Event, got []handlerCall) string {
	var parts []string
	seen := map[string]bool{}
	for i, e := range queued {
		if seen[e.Type] || i >= len(got) {
			continue
		}
		seen[e.Type] = true
		c := got[i]
		what := c.kind
		switch {
		case c.kind == "update" && c.oldRV == c.newRV:
			what = "update with the same rv"
		case c.kind == "update":
			what = "update with a new rv"
		}
		parts = append(parts, e.Type+" → "+what)
	}
	return strings.Join(parts, ", ")
}

// deltaTypesRecorded: the tracked object's deltas carried each type in the order
// of its life.
func deltaTypesRecorded(r recorded) Check {
	types := r.of(trace.Queued).about("/tracked").types()
	return check("tracked's deltas: Added, Updated, Sync, Replaced, Deleted, in that order",
		inOrder(types, []string{"Added", "Updated", "Sync", "Replaced", "Deleted"}), "%s", strings.Join(types, ", "))
}
