package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
)

// periodicResync: an informer with a resync period replays its cache, untouched, as
// updates to the handlers due one; a handler registered with ResyncPeriod 0 is never
// due, and still gets every real change.
func periodicResync() Scenario {
	return Scenario{
		Name:     "periodic-resync",
		Question: "What does a periodic resync deliver, and how do I turn it off for one handler?",
		Why: "Every ResyncPeriod the reflector's resync timer asks sharedProcessor.shouldResync which handlers are due and, when one is, calls the queue's Resync: the RealFIFO queues one SyncAll, and the informer, popping it, hands every cached object to distributeUpdate as OnUpdate(obj, obj) — nothing comes from the apiserver, and nothing is written to the cache. " +
			"An update whose old and new resourceVersions are equal is a sync, which distribute gives only to the handlers marked due at the latest check; a handler registered with HandlerOptions.ResyncPeriod 0 has period 0, so every check marks it not due, while every real change still reaches it. " +
			"A handler's period under 1s is raised to 1s (minimumResyncPeriod, as in client-go); and until the first check every handler counts as due, so a relist before it would bring even the period-0 handler its same-resourceVersion updates (docs/faq.md #8).",
		Read: []string{
			"docs/04-informer.md (Resync) and docs/faq.md #8",
			"reflector/resync.go: Reflector.resyncLoop",
			"informer/processor.go: sharedProcessor.shouldResync, sharedProcessor.distribute",
			"informer/deltas.go: SharedIndexInformer.applyDelta (the SyncAll case), SharedIndexInformer.distributeUpdate",
			"informer/registration.go: HandlerOptions (ResyncPeriod), minimumResyncPeriod",
		},
		Run:      runPeriodicResync,
		Recorded: periodicResyncRecorded,
	}
}

// The handlers' names, in the trace.
const (
	resyncingHandler = "resyncs"
	noResyncHandler  = "no-resync"
)

// resyncsToSee is how many complete resyncs the scenario measures.
const resyncsToSee = 3

// realChange is how the scenario's action describes the one real change; the
// recording is cut there.
const realChange = "PUT cm-0 with new data"

// runPeriodicResync runs one informer with a 1s resync and two handlers, one of
// them registered with ResyncPeriod 0, lets it resync a few times untouched, then
// makes one real change.
func runPeriodicResync(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "periodic-resync")
	if err != nil {
		return nil, err
	}
	if err := createConfigMaps(ctx, core, ns, "cm", 3, "k", "v"); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMaps cm-0, cm-1, cm-2 into %s", ns)

	o, err := newObserved[*corev1.ConfigMap](lab, lab.Watched, configMaps(ns), informer.FactoryOptions{ResyncPeriod: resyncEvery})
	if err != nil {
		return nil, err
	}
	defer o.stop()
	f, rec, inf := o.factory, o.rec, o.SharedIndexInformer
	due, off := &callRecorder[*corev1.ConfigMap]{}, &callRecorder[*corev1.ConfigMap]{}
	dueReg, err := inf.AddEventHandlerWithOptions(due.handler(), informer.HandlerOptions{Name: resyncingHandler})
	if err != nil {
		return nil, err
	}
	offReg, err := inf.AddEventHandlerWithOptions(off.handler(), informer.HandlerOptions{Name: noResyncHandler, ResyncPeriod: ptr.To(time.Duration(0))})
	if err != nil {
		return nil, err
	}
	f.Start(ctx)
	if err := informer.WaitForCacheSync(ctx, inf, dueReg, offReg); err != nil {
		return nil, err
	}
	syncedAt := time.Now()
	r.Do("start a ConfigMap informer with FactoryOptions{ResyncPeriod: %s} and two handlers: %q registered with HandlerOptions{} (the informer's period), "+
		"%q with HandlerOptions{ResyncPeriod: ptr.To(time.Duration(0))}; wait until both have the initial list", resyncEvery, resyncingHandler, noResyncHandler)

	resyncTicks := func() []trace.Event {
		return trace.Filter(rec.Events(), func(e trace.Event) bool {
			return e.Kind == trace.ResyncTick && e.Reason == "resyncing the store" && e.Time.After(syncedAt)
		})
	}
	// Why one tick more than the resyncs measured: each resync is measured from its
	// tick to the next, so that it is complete when it is read.
	r.Do("touch nothing, and wait for %d resync ticks", resyncsToSee+1)
	if err := await(ctx, awaitLong, fmt.Sprintf("%d resync ticks", resyncsToSee+1), func() bool { return len(resyncTicks()) > resyncsToSee }); err != nil {
		return nil, err
	}
	ticks := resyncTicks()[:resyncsToSee+1]

	cm, ok, _ := inf.Indexer().GetByKey(ns + "/cm-0")
	if !ok {
		return nil, fmt.Errorf("cm-0 is not in the cache")
	}
	changed := cm.DeepCopy() // Pitfall: never modify a cached object.
	changed.Data = map[string]string{"k": "changed"}
	putAt := time.Now()
	r.Do("%s, a real change", realChange)
	if err := updateConfigMap(ctx, core, changed); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "both handlers to get cm-0's change", func() bool {
		isChange := func(h handlerCall) bool { return h.kind == "update" && h.newRV == changed.ResourceVersion }
		return due.has("cm-0", isChange)() && off.has("cm-0", isChange)()
	}); err != nil {
		return nil, err
	}

	events := rec.Events()
	// Each measured resync: its tick up to the next tick.
	type resync struct {
		syncAll, fanned, skippedOne, dueCalls, offCalls, watchEvents, applied int
	}
	var resyncs []resync
	var intervals []string
	for i := range resyncsToSee {
		from, to := ticks[i].Time, ticks[i+1].Time
		in := trace.Filter(events, func(e trace.Event) bool { return !e.Time.Before(from) && e.Time.Before(to) })
		var s resync
		for _, e := range in {
			switch {
			case e.Kind == trace.Queued && e.Type == "SyncAll":
				s.syncAll++
			case e.Kind == trace.FannedOut && e.Type == "update":
				s.fanned++
				if e.Listeners == 1 && e.Skipped == 1 {
					s.skippedOne++
				}
			case e.Kind == trace.HandlerCalled && e.Source == resyncingHandler && e.Type == "update":
				s.dueCalls++
			case e.Kind == trace.HandlerCalled && e.Source == noResyncHandler:
				s.offCalls++
			case e.Kind == trace.WatchEvent:
				s.watchEvents++
			case e.Kind == trace.Applied:
				s.applied++
			}
		}
		resyncs = append(resyncs, s)
		intervals = append(intervals, to.Sub(from).Round(time.Millisecond).String())
	}

	// The first resync, as the trace shows it.
	r.Timeline(trace.Filter(events, func(e trace.Event) bool {
		if e.Time.Before(ticks[0].Time) || !e.Time.Before(ticks[1].Time) {
			return false
		}
		switch e.Kind {
		case trace.ResyncTick, trace.Queued, trace.Popped, trace.FannedOut, trace.HandlerCalled:
			return true
		}
		return false
	}))
	var syncAll, fanned, skippedOne, dueCalls, offCalls, watchEvents, applied int
	for _, s := range resyncs {
		syncAll += s.syncAll
		fanned += s.fanned
		skippedOne += s.skippedOne
		dueCalls += s.dueCalls
		offCalls += s.offCalls
		watchEvents += s.watchEvents
		applied += s.applied
	}
	r.See("%d resyncs measured, %s apart (the timer restarts after each resync); in them: %d SyncAll queued, %d updates fanned out (%d to 1 handler with 1 not due), "+
		"%d watch events, %d writes to the cache", resyncsToSee, strings.Join(intervals, ", "), syncAll, fanned, skippedOne, watchEvents, applied)

	quietDue := due.between("update", syncedAt, putAt)
	quietOff := off.between("update", syncedAt, putAt)
	sameObj := 0
	for _, u := range quietDue {
		if u.same && u.oldRV == u.newRV {
			sameObj++
		}
	}
	r.See("from the sync to the PUT: %q got %d updates, %d of them OnUpdate(obj, obj) with old and new the very same object; %q got %d",
		resyncingHandler, len(quietDue), sameObj, noResyncHandler, len(quietOff))
	dueChange, offChange := due.between("update", putAt, time.Now()), off.between("update", putAt, time.Now())
	changeOf := func(us []handlerCall) string {
		for _, u := range us {
			if u.name == "cm-0" && u.newRV == changed.ResourceVersion {
				return fmt.Sprintf("OnUpdate(rv %s → %s)", u.oldRV, u.newRV)
			}
		}
		return "nothing"
	}
	r.See("the real change (rv %s): %q got %s, %q got %s", changed.ResourceVersion, resyncingHandler, changeOf(dueChange), noResyncHandler, changeOf(offChange))

	r.Check(fmt.Sprintf("each of the %d resyncs queued one SyncAll and fanned the 3 cached ConfigMaps out as updates", resyncsToSee),
		syncAll == resyncsToSee && fanned == 3*resyncsToSee, "%d SyncAll, %d updates fanned out", syncAll, fanned)
	r.Check("nothing came from the apiserver and nothing was written to the cache for them", watchEvents == 0 && applied == 0,
		"%d watch events, %d cache writes", watchEvents, applied)
	r.Check(fmt.Sprintf("every resync update reached %q only: %q was not due", resyncingHandler, noResyncHandler),
		skippedOne == fanned && dueCalls == fanned && offCalls == 0, "%d of %d fan-outs to 1 handler with 1 skipped; handler calls: %s %d, %s %d",
		skippedOne, fanned, resyncingHandler, dueCalls, noResyncHandler, offCalls)
	r.Check(fmt.Sprintf("%q's resync updates were OnUpdate(obj, obj): the same object, the same resourceVersion", resyncingHandler),
		len(quietDue) >= 3*resyncsToSee && sameObj == len(quietDue), "%d of %d", sameObj, len(quietDue))
	r.Check(fmt.Sprintf("%q got no update until the real change, and then that one", noResyncHandler),
		len(quietOff) == 0 && changeOf(offChange) != "nothing", "%d before; the change: %s", len(quietOff), changeOf(offChange))
	r.Answer = fmt.Sprintf("the cache, replayed: every %s the informer queued one SyncAll and gave each of the 3 cached ConfigMaps to %q as OnUpdate(obj, obj) — the same object, "+
		"the same resourceVersion, %d watch events, %d cache writes (%d updates in %d resyncs); %q, registered with HandlerOptions.ResyncPeriod 0, got none of them, and got the real change",
		resyncEvery, resyncingHandler, watchEvents, applied, dueCalls, resyncsToSee, noResyncHandler)
	return r, nil
}

// periodicResyncRecorded: before the real change, the resync ticks queued SyncAll
// deltas whose updates reached "resyncs" only, with no watch event; after it,
// "no-resync" got the change.
func periodicResyncRecorded(r recorded) Check {
	quiet := r.before(realChange)
	first := quiet.index(func(e trace.Event) bool { return e.Kind == trace.ResyncTick && e.Reason == "resyncing the store" })
	var resyncing recorded
	if first >= 0 {
		resyncing = quiet[first:]
	}
	ticks := resyncing.of(trace.ResyncTick).where(func(e trace.Event) bool { return e.Reason == "resyncing the store" })
	syncAll := resyncing.of(trace.Queued).where(func(e trace.Event) bool { return e.Type == "SyncAll" })
	fanned := resyncing.of(trace.FannedOut)
	skipped := fanned.where(func(e trace.Event) bool { return e.Type == "update" && e.Listeners == 1 && e.Skipped == 1 })
	due := resyncing.of(trace.HandlerCalled).from(resyncingHandler).where(func(e trace.Event) bool { return e.Type == "update" })
	off := resyncing.of(trace.HandlerCalled).from(noResyncHandler)
	watched := resyncing.of(trace.WatchEvent)
	change := r.after(realChange).of(trace.HandlerCalled).from(noResyncHandler).where(func(e trace.Event) bool { return e.Type == "update" })
	return check("before the real change: resync ticks, each a SyncAll whose updates reached \"resyncs\" only (1 handler, 1 skipped), no watch event; after it, \"no-resync\" got the update",
		len(ticks) >= resyncsToSee && len(syncAll) >= resyncsToSee && len(due) >= 3*resyncsToSee && len(skipped) == len(fanned) && len(off) == 0 &&
			len(watched) == 0 && len(change) >= 1,
		"%d ticks, %d SyncAll, updates to resyncs %d, to no-resync %d; %d of %d fan-outs skipped one; %d watch events; no-resync's change: %d",
		len(ticks), len(syncAll), len(due), len(off), len(skipped), len(fanned), len(watched), len(change))
}
