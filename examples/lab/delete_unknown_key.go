package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/trace"
)

// deleteUnknownKey: a watch DELETED for an object the informer never held, on both
// queues. DeltaFIFO drops it; RealFIFO passes it on, and the handler gets OnDelete for
// an object it never saw added.
func deleteUnknownKey() Scenario {
	return Scenario{
		Name:     "delete-unknown-key",
		Question: "A watch DELETED arrives for an object the informer never held: does the handler's OnDelete run, and what does the cache hold?",
		Pipeline: "both, side by side: informer \"default\" runs the default RealFIFO fed by a watch-list, informer \"classic\" the classic DeltaFIFO fed by a paged LIST, chosen by name " +
			"(Options{Queue: informer.DeltaFIFOQueue, InitialList: reflector.PagedList}), because the two queues treat this delete differently.",
		Why: "A correct apiserver sends no DELETED for an object whose ADDED (or listing) the watch did not give, so the scenario makes that happen: a wrapper around each informer's ListerWatcher loses one ADDED watch event — a missed event, on purpose. " +
			"DeltaFIFO reads the cache it feeds (KnownObjects, the informer's indexer), and its Delete drops a delete whose key is neither queued nor known (deleteIsNewsLocked): the handler hears nothing. " +
			"RealFIFO never reads the cache and queues every delete; applyDelta deletes the key from the indexer, which has nothing to delete, and passes the delete on, so the handler gets OnDelete with the object the DELETED event carried and no tombstone, for an object it was never told about — as client-go's DeltaFIFO.Delete and processDeltas do; either way the cache ends without it.",
		Read: []string{
			"docs/02-deltafifo.md (Walk through the code, steps 4 and 7) and docs/04-informer.md (What a handler receives, case by case: note 3)",
			"deltafifo/delta_fifo.go: DeltaFIFO.Delete, DeltaFIFO.deleteIsNewsLocked",
			"deltafifo/real_fifo.go: RealFIFO.Delete",
			"informer/deltas.go: SharedIndexInformer.applyDelta (the Deleted case)",
		},
		Run:      runDeleteUnknownKey,
		Recorded: deleteUnknownKeyRecorded,
	}
}

// lostName is the ConfigMap whose ADDED event the wrappers lose.
const lostName = "never-seen"

// loseAction is how the scenario's fault is described; the recording is read after it.
const loseAction = "arm each informer's ListerWatcher wrapper to lose the next ADDED watch event for " + lostName

// losingLW is a ConfigMap ListerWatcher that passes every list and watch event of
// inner on, except that, once armed, it loses the next ADDED watch event for the
// object named name: a missed event, made on purpose. The reflector never sees it,
// so no trace event reports it either.
type losingLW struct {
	inner reflector.ListerWatcher[*corev1.ConfigMap]
	name  string
	armed atomic.Bool

	mu     sync.Mutex
	lostRV string // the lost event's resourceVersion, "" until then; guarded by mu
}

// arm makes the wrapper lose the next ADDED event for its object.
func (l *losingLW) arm() { l.armed.Store(true) }

// lost is the lost event's resourceVersion, "" if none was lost yet.
func (l *losingLW) lost() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lostRV
}

// List passes the LIST through.
func (l *losingLW) List(ctx context.Context, opts metav1.ListOptions) (reflector.ListResult[*corev1.ConfigMap], error) {
	return l.inner.List(ctx, opts)
}

// Watch opens inner's watch and relays its events through a goroutine that loses
// the armed one.
func (l *losingLW) Watch(ctx context.Context, opts metav1.ListOptions) (reflector.Watch[*corev1.ConfigMap], error) {
	w, err := l.inner.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	lw := &losingWatch{inner: w, out: make(chan reflector.Event[*corev1.ConfigMap]), stop: make(chan struct{}), done: make(chan struct{})}
	// Owner: the watch. Exits when inner's stream ends or Stop is called; Stop waits for it.
	go lw.relay(l.lose)
	return lw, nil
}

// lose reports whether ev is the event to lose, and records it; it loses one event
// per arming.
func (l *losingLW) lose(ev reflector.Event[*corev1.ConfigMap]) bool {
	if ev.Type != watch.Added || ev.Object == nil || ev.Object.Name != l.name || !l.armed.CompareAndSwap(true, false) {
		return false
	}
	l.mu.Lock()
	l.lostRV = ev.Object.ResourceVersion
	l.mu.Unlock()
	return true
}

// losingWatch is the watch losingLW hands the reflector.
type losingWatch struct {
	inner reflector.Watch[*corev1.ConfigMap]
	out   chan reflector.Event[*corev1.ConfigMap]
	stop  chan struct{} // closed by Stop
	once  sync.Once
	done  chan struct{} // closed when relay has returned
}

// relay passes inner's events to out, except those lose takes, until inner's stream
// ends or Stop is called; then it closes out.
func (w *losingWatch) relay(lose func(reflector.Event[*corev1.ConfigMap]) bool) {
	defer close(w.done)
	defer close(w.out)
	for ev := range w.inner.ResultChan() {
		if lose(ev) {
			continue
		}
		select {
		case w.out <- ev:
		case <-w.stop:
			return
		}
	}
}

// ResultChan delivers the relayed events.
func (w *losingWatch) ResultChan() <-chan reflector.Event[*corev1.ConfigMap] { return w.out }

// Stop ends the stream and waits for the relay.
func (w *losingWatch) Stop() {
	w.once.Do(func() { close(w.stop) })
	w.inner.Stop()
	<-w.done
}

// unknownSide is one of the scenario's two informers.
type unknownSide struct {
	name  string // the informer's name; its handler is name + "-handler"
	queue informer.QueueKind
	list  reflector.InitialList
	lw    *losingLW
	inf   *informer.SharedIndexInformer[*corev1.ConfigMap]
	reg   *informer.Registration[*corev1.ConfigMap]
	calls *callRecorder[*corev1.ConfigMap]
}

// runDeleteUnknownKey runs one informer per queue over wrappers that lose the ADDED
// event of one ConfigMap, deletes that ConfigMap, and compares what each handler got.
func runDeleteUnknownKey(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "delete-unknown-key")
	if err != nil {
		return nil, err
	}
	if err := create(ctx, core, ns, "configmaps", configMap(ns, "witness")); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMap witness into %s", ns)

	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	if err != nil {
		return nil, err
	}
	tracer, rec := lab.newRecorder()
	sides := []*unknownSide{
		{name: "default", queue: informer.RealFIFOQueue, list: reflector.WatchList},
		{name: "classic", queue: informer.DeltaFIFOQueue, list: reflector.PagedList},
	}
	runCtx, cancel := context.WithCancel(ctx)
	var running sync.WaitGroup
	defer func() {
		cancel()
		running.Wait()
	}()
	var syncers []informer.Syncer
	for _, s := range sides {
		inner, err := listwatch.NewForConfig[*corev1.ConfigMap](lab.Watched, corev1.SchemeGroupVersion, listwatch.Options{
			Resource: "configmaps", Namespace: ns, LabelSelector: labLabel, Scheme: scheme, Protobuf: true,
		})
		if err != nil {
			return nil, err
		}
		s.lw = &losingLW{inner: inner, name: lostName}
		s.inf = informer.NewSharedIndexInformer[*corev1.ConfigMap](s.lw, informer.Options[*corev1.ConfigMap]{
			Name: s.name, Queue: s.queue, InitialList: s.list, Tracer: tracer, Logger: lab.log,
		})
		s.calls = &callRecorder[*corev1.ConfigMap]{}
		if s.reg, err = s.inf.AddEventHandlerWithOptions(s.calls.handler(), informer.HandlerOptions{Name: s.name + "-handler"}); err != nil {
			return nil, err
		}
		syncers = append(syncers, s.inf, s.reg)
	}
	for _, s := range sides {
		// Owner: this scenario. Exits when the deferred cancel ends runCtx.
		running.Go(func() { s.inf.Run(runCtx) })
	}
	if err := informer.WaitForCacheSync(ctx, syncers...); err != nil {
		return nil, err
	}
	r.Do("start two ConfigMap informers on %s, each over a wrapper of its ListerWatcher that passes every list and watch event on, and each with a handler recording its calls: "+
		"\"default\" (informer.NewSharedIndexInformer with zero Queue and InitialList: RealFIFO, watch-list) and \"classic\" (Queue: informer.DeltaFIFOQueue, InitialList: reflector.PagedList)", ns)

	for _, s := range sides {
		s.lw.arm()
	}
	r.Fault("%s: a missed event, on purpose", loseAction)
	lost := configMap(ns, lostName)
	if err := create(ctx, core, ns, "configmaps", lost); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMap %s (rv %s), and wait until both wrappers have lost its ADDED event", lostName, lost.ResourceVersion)
	if err := await(ctx, awaitLong, "both wrappers to lose the ADDED event", func() bool {
		return sides[0].lw.lost() != "" && sides[1].lw.lost() != ""
	}); err != nil {
		return nil, err
	}
	key := ns + "/" + lostName
	heldBefore := map[string]bool{}
	for _, s := range sides {
		heldBefore[s.name] = cached(s.inf, key)()
	}

	r.Do("DELETE %s; wait until the default handler has a delete for it and the classic informer's DeltaFIFO has answered the DELETED (queued or dropped it)", lostName)
	if err := deleteObject(ctx, core, "configmaps", ns, lostName); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "the DELETED event to reach both queues", func() bool {
		events := rec.Events()
		return sides[0].calls.has(lostName, func(c handlerCall) bool { return c.kind == "delete" })() &&
			count(events, func(e trace.Event) bool {
				return e.Source == "classic" && e.Key == key && (e.Kind == trace.DeleteDropped || e.Kind == trace.Queued)
			}) > 0
	}); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMap after, and wait until both handlers have its add: each queue hands its changes out in the order they came, so nothing about %s can still be waiting", lostName)
	if err := create(ctx, core, ns, "configmaps", configMap(ns, "after")); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "both handlers to add after", func() bool {
		return sides[0].calls.has("after", func(c handlerCall) bool { return c.kind == "add" })() &&
			sides[1].calls.has("after", func(c handlerCall) bool { return c.kind == "add" })()
	}); err != nil {
		return nil, err
	}

	events := rec.Events()
	about := trace.Filter(events, func(e trace.Event) bool { return e.Key == key })
	r.Timeline(about)
	added := count(about, func(e trace.Event) bool {
		return (e.Kind == trace.WatchEvent && e.Type == "ADDED") || (e.Kind == trace.Applied && e.Type == "add")
	})
	type seen struct {
		deleted, queued, dropped, applied int
		calls                             []handlerCall
		keys                              []string
	}
	got := map[string]seen{}
	for _, s := range sides {
		from := trace.Filter(about, func(e trace.Event) bool { return e.Source == s.name })
		keys := s.inf.Indexer().ListKeys()
		slices.Sort(keys)
		got[s.name] = seen{
			deleted: count(from, func(e trace.Event) bool { return e.Kind == trace.WatchEvent && e.Type == "DELETED" }),
			queued:  count(from, func(e trace.Event) bool { return e.Kind == trace.Queued && e.Type == "Deleted" }),
			dropped: count(from, func(e trace.Event) bool { return e.Kind == trace.DeleteDropped }),
			applied: count(from, func(e trace.Event) bool { return e.Kind == trace.Applied && e.Type == "delete" }),
			calls:   s.calls.of(lostName),
			keys:    keys,
		}
		r.See("%-7s lost the ADDED at rv %s; %s held it before the DELETE: %v; its handler got about %s: %s; its cache: %s",
			s.name, s.lw.lost(), s.name, heldBefore[s.name], lostName, callsText(got[s.name].calls), joinKeys(keys))
	}
	def, cls := got["default"], got["classic"]
	r.See("the default informer's \"applied delete\" removed nothing: its cache never held %s (Indexer.Delete of a missing key does nothing)", lostName)
	want := []string{ns + "/after", ns + "/witness"}

	r.Check("neither informer saw "+lostName+"'s ADDED: each wrapper lost it, so no cache held it", added == 0 && sides[0].lw.lost() == lost.ResourceVersion &&
		sides[1].lw.lost() == lost.ResourceVersion && !heldBefore["default"] && !heldBefore["classic"],
		"ADDED events or cache adds in the trace: %d; lost at rv %s and %s", added, sides[0].lw.lost(), sides[1].lw.lost())
	r.Check("both reflectors received the DELETED watch event", def.deleted == 1 && cls.deleted == 1, "default %d, classic %d", def.deleted, cls.deleted)
	deleteCall := len(def.calls) == 1 && def.calls[0].kind == "delete" && !def.calls[0].stone
	r.Check("RealFIFO queued it, the informer passed it on: OnDelete without a tombstone, for an object the handler never saw added",
		def.queued == 1 && def.applied == 1 && deleteCall, "queued %d, applied %d; calls: %s", def.queued, def.applied, callsText(def.calls))
	r.Check("DeltaFIFO dropped it (neither queued nor known): nothing queued, and its handler heard nothing about "+lostName,
		cls.dropped == 1 && cls.queued == 0 && len(cls.calls) == 0, "dropped %d, queued %d; calls: %s", cls.dropped, cls.queued, callsText(cls.calls))
	r.Check("both caches end with witness and after, without "+lostName, slices.Equal(def.keys, want) && slices.Equal(cls.keys, want),
		"default: %s; classic: %s", joinKeys(def.keys), joinKeys(cls.keys))
	rv := "?"
	if len(def.calls) > 0 {
		rv = def.calls[0].oldRV
	}
	r.Answer = fmt.Sprintf("it depends on the queue: the default RealFIFO passed the DELETED on, and its handler got OnDelete(rv=%s, tombstone=false) for an object it never saw added; "+
		"the classic DeltaFIFO dropped it, neither queued nor known, and its handler heard nothing; both caches hold witness and after only, as client-go's two queues leave them",
		rv)
	return r, nil
}

// deleteUnknownKeyRecorded: after the wrappers were armed, no ADDED for never-seen
// reached either reflector; the DELETED did: "default" queued it and its handler got
// the delete, "classic" dropped it and its handler got nothing.
func deleteUnknownKeyRecorded(r recorded) Check {
	after := r.after(loseAction).about("/" + lostName)
	added := after.of(trace.WatchEvent).where(func(e trace.Event) bool { return e.Type == "ADDED" })
	deleted := after.of(trace.WatchEvent).where(func(e trace.Event) bool { return e.Type == "DELETED" })
	defQueued := after.of(trace.Queued).from("default").where(func(e trace.Event) bool { return e.Type == "Deleted" })
	defCalled := after.of(trace.HandlerCalled).from("default-handler").where(func(e trace.Event) bool { return e.Type == "delete" })
	clsDropped := after.of(trace.DeleteDropped).from("classic")
	clsCalled := after.of(trace.HandlerCalled).from("classic-handler")
	return check("no ADDED for never-seen, its DELETED reached both: \"default\" queued it and its handler got OnDelete; \"classic\" dropped it and its handler got nothing",
		len(added) == 0 && len(deleted) == 2 && len(defQueued) == 1 && len(defCalled) == 1 && len(clsDropped) == 1 && len(clsCalled) == 0,
		"ADDED %d, DELETED %d; default: queued %d, OnDelete %d; classic: dropped %d, calls %d",
		len(added), len(deleted), len(defQueued), len(defCalled), len(clsDropped), len(clsCalled))
}
