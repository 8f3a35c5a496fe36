package main

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
	"github.com/kubeinternals/informers/workqueue"
)

// sameKeyDedup: two objects that map to one workqueue key. Changes that arrive while
// the key waits cost one sync; a change that arrives while the key is being processed
// costs one more, after Done.
func sameKeyDedup() Scenario {
	return Scenario{
		Name:     "same-key-dedup",
		Question: "Two objects that map to the same key change at once: does sync run once, twice, or at random?",
		Why: "The queue holds keys, not events: an Add of a key that is already waiting changes nothing (deduplicated), so one sync covers every change that came before a worker took the key. " +
			"An Add of a key a worker is processing marks it dirty, and Done puts it back, so the change is never lost and the next sync runs after the first, never beside it. " +
			"Which case you get depends only on whether the key was waiting or processing when the second change arrived, and the last sync always reads the newest state from the cache.",
		Read: []string{
			"docs/05-workqueue.md (the dirty and processing sets) and docs/07-reading-a-trace.md (deduplication and coalescing)",
			"workqueue/queue.go: Queue.Add, Queue.Done",
		},
		Run:      runSameKeyDedup,
		Recorded: sameKeyDedupRecorded,
	}
}

// groupLabel maps a ConfigMap to its workqueue key: namespace/<group>.
const groupLabel = "kubeinternals.io/lab-group"

// syncView is what one sync saw: the key and the value of each ConfigMap in the cache.
type syncView struct {
	key  string
	seen map[string]string // ConfigMap name → data "v"
}

// String is "a=2 b=3".
func (v syncView) String() string {
	return fmt.Sprintf("a=%s b=%s", v.seen["a"], v.seen["b"])
}

// gatedWorker is a worker the scenario drives step by step: it takes a key only when
// told, reports what it read from the cache, and calls Done only when told. Why: so
// that "the key is waiting" and "the key is being processed" are states the scenario
// chooses, not lucky timing.
type gatedWorker struct {
	next   chan struct{} // scenario → worker: Get the next key
	got    chan syncView // worker → scenario: the key and what the cache held
	finish chan struct{} // scenario → worker: call Done
	done   chan struct{} // worker → scenario: Done was called
}

// run is the worker's loop; it returns when ctx ends or the queue shuts down.
func (w *gatedWorker) run(ctx context.Context, q *workqueue.Queue[string], read func() map[string]string) {
	for {
		select {
		case <-w.next:
		case <-ctx.Done():
			return
		}
		key, shutdown := q.Get()
		if shutdown {
			return
		}
		select {
		case w.got <- syncView{key: key, seen: read()}:
		case <-ctx.Done():
			q.Done(key)
			return
		}
		select {
		case <-w.finish:
		case <-ctx.Done():
		}
		q.Done(key)
		select {
		case w.done <- struct{}{}:
		case <-ctx.Done():
			return
		}
	}
}

// take lets the worker Get a key and returns what its sync read.
func (w *gatedWorker) take(ctx context.Context) (syncView, error) {
	ctx, cancel := context.WithTimeout(ctx, awaitLong)
	defer cancel()
	select {
	case w.next <- struct{}{}:
	case <-ctx.Done():
		return syncView{}, fmt.Errorf("the worker is not ready to Get: %w", ctx.Err())
	}
	select {
	case v := <-w.got:
		return v, nil
	case <-ctx.Done():
		return syncView{}, fmt.Errorf("the worker got no key: %w", ctx.Err())
	}
}

// release lets the worker call Done and waits until it has.
func (w *gatedWorker) release(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, awaitLong)
	defer cancel()
	select {
	case w.finish <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("the worker holds no key: %w", ctx.Err())
	}
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the worker did not call Done: %w", ctx.Err())
	}
}

// sync is one whole sync: take, then release.
func (w *gatedWorker) sync(ctx context.Context) (syncView, error) {
	v, err := w.take(ctx)
	if err != nil {
		return v, err
	}
	return v, w.release(ctx)
}

// runSameKeyDedup changes two ConfigMaps of one group while their key waits, then one
// while the key is being processed, with a gated worker.
func runSameKeyDedup(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "same-key-dedup")
	if err != nil {
		return nil, err
	}
	grouped := func(name, v string) *corev1.ConfigMap {
		cm := configMap(ns, name, "v", v)
		cm.Labels[groupLabel] = "g"
		return cm
	}
	for _, name := range []string{"a", "b"} {
		if err := create(ctx, core, ns, "configmaps", grouped(name, "1")); err != nil {
			return nil, err
		}
	}
	key := ns + "/g"
	r.Do("POST ConfigMaps a and b (data v=1) into %s, both labelled %s=g: the handler maps either to the workqueue key %s", ns, groupLabel, key)

	o, err := newObserved[*corev1.ConfigMap](lab, lab.Watched, configMaps(ns), informer.FactoryOptions{})
	if err != nil {
		return nil, err
	}
	defer o.stop()
	f, tracer, rec, inf := o.factory, o.tracer, o.rec, o.SharedIndexInformer
	q := workqueue.NewQueue[string](workqueue.Options{Name: "groups", Tracer: tracer})
	enqueue := func(cm *corev1.ConfigMap) {
		to := cm.Namespace + "/" + cm.Labels[groupLabel]
		tracer.Map("configmaps", cm.Namespace+"/"+cm.Name, to)
		q.Add(to)
	}
	if _, err := inf.AddEventHandlerWithOptions(informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(cm *corev1.ConfigMap, _ bool) { enqueue(cm) },
		UpdateFunc: func(_, cm *corev1.ConfigMap) { enqueue(cm) },
		DeleteFunc: func(d informer.DeletedObject[*corev1.ConfigMap]) { enqueue(d.OptionalObj) },
	}, informer.HandlerOptions{Name: "enqueueGroup"}); err != nil {
		return nil, err
	}
	read := func() map[string]string {
		seen := map[string]string{}
		for _, name := range []string{"a", "b"} {
			if cm, ok, _ := inf.Indexer().GetByKey(ns + "/" + name); ok {
				seen[name] = cm.Data["v"]
			}
		}
		return seen
	}
	w := &gatedWorker{next: make(chan struct{}), got: make(chan syncView), finish: make(chan struct{}), done: make(chan struct{})}
	wctx, stopWorker := context.WithCancel(ctx)
	var wg sync.WaitGroup
	// Goroutine owned by this scenario: the gated worker; it exits when wctx ends or
	// the queue shuts down, and the scenario waits for it on every path out.
	wg.Go(func() { w.run(wctx, q, read) })
	defer func() {
		stopWorker()
		q.ShutDown()
		wg.Wait()
	}()
	r.Do("start a ConfigMap informer whose handler Adds the group's key for every add, update and delete, and one worker that takes a key only when we let it " +
		"and calls Done only when we let it (a gate, so that the key's state is ours to choose)")
	f.Start(ctx)

	added := func(from int) []trace.Event {
		return trace.Filter(rec.Events()[from:], func(e trace.Event) bool { return e.Kind == trace.Added && e.Key == key })
	}
	awaitAdds := func(from, n int, what string) error {
		return await(ctx, awaitLong, what, func() bool { return len(added(from)) >= n })
	}
	if err := awaitAdds(0, 2, "the two initial adds"); err != nil {
		return nil, err
	}
	initial, err := w.sync(ctx)
	if err != nil {
		return nil, err
	}
	r.Do("wait for the two initial adds, then let the worker sync once")

	// Phase 1: both change while the key waits.
	mark1 := len(rec.Events())
	for _, name := range []string{"a", "b"} {
		if err := updateConfigMap(ctx, core, grouped(name, "2")); err != nil {
			return nil, err
		}
	}
	if err := awaitAdds(mark1, 2, "two adds for the two updates"); err != nil {
		return nil, err
	}
	waiting := q.Len()
	one, err := w.sync(ctx)
	if err != nil {
		return nil, err
	}
	adds1 := added(mark1)
	r.Do("case 1: PUT a and b with v=2 while the worker is held before Get; once both Adds happened, let it sync")

	// Phase 2: one changes while the key is being processed.
	mark2 := len(rec.Events())
	if err := updateConfigMap(ctx, core, grouped("b", "3")); err != nil {
		return nil, err
	}
	if err := awaitAdds(mark2, 1, "the add for b"); err != nil {
		return nil, err
	}
	first, err := w.take(ctx)
	if err != nil {
		return nil, err
	}
	if err := updateConfigMap(ctx, core, grouped("a", "3")); err != nil {
		return nil, err
	}
	if err := awaitAdds(mark2, 2, "the add for a while the key is processing"); err != nil {
		return nil, err
	}
	if err := w.release(ctx); err != nil {
		return nil, err
	}
	requeued := q.Len()
	second, err := w.sync(ctx)
	if err != nil {
		return nil, err
	}
	adds2 := added(mark2)
	r.Do("case 2: PUT b with v=3; once the Add happened, let the worker Get the key and read the cache; while it holds the key, PUT a with v=3; " +
		"once that Add happened, let the worker call Done, then let it sync again")

	events := rec.Events()
	r.Timeline(trace.Filter(events[mark1:], func(e trace.Event) bool {
		return (e.Stage == trace.Workqueue && e.Key == key) || e.Kind == trace.Mapped
	}))
	all := trace.Filter(events, func(e trace.Event) bool { return e.Kind == trace.Added && e.Key == key })
	reasons := map[string]int{}
	for _, e := range all {
		reasons[e.Reason]++
	}
	syncs := count(events, func(e trace.Event) bool { return e.Kind == trace.Got && e.Key == key })
	doneRequeued := count(events[mark2:], func(e trace.Event) bool { return e.Kind == trace.Done && e.Key == key && e.Reason == "requeued" })
	r.See("what each sync read from the cache: initial %s; case 1 %s; case 2 first %s, second %s", initial, one, first, second)
	r.See("Adds of %s in all: %d (new %d, deduplicated %d, dirty %d); syncs: %d", key, len(all), reasons["new"], reasons["deduplicated"], reasons["dirty"], syncs)

	r.Check("case 1: the second Add found the key waiting and was deduplicated", len(adds1) == 2 && adds1[0].Reason == "new" && adds1[1].Reason == "deduplicated" && waiting == 1,
		"Adds: %s; queue length before the sync %d", reasonsOf(adds1), waiting)
	r.Check("case 1: one sync saw both changes", one.seen["a"] == "2" && one.seen["b"] == "2", "it saw %s", one)
	r.Check("case 2: the Add during processing marked the key dirty, and Done queued it again",
		len(adds2) == 2 && adds2[0].Reason == "new" && adds2[1].Reason == "dirty" && doneRequeued == 1 && requeued == 1,
		"Adds: %s; Done requeued: %d; queue length after Done %d", reasonsOf(adds2), doneRequeued, requeued)
	r.Check("case 2: the first sync saw a's old value, the second its new one", first.seen["a"] == "2" && second.seen["a"] == "3" && second.seen["b"] == "3",
		"first %s, then %s", first, second)
	r.Answer = fmt.Sprintf("never at random: changes that arrive while the key waits cost one sync (case 1: 2 Adds, the second deduplicated, 1 sync saw both); "+
		"a change that arrives while the key is processing costs one more, after Done (case 2: dirty, requeued, 2 syncs, the second saw v=%s); "+
		"in all %d Adds, %d syncs", second.seen["a"], len(all), syncs)
	return r, nil
}

// sameKeyDedupRecorded: a second Add of a waiting key was deduplicated; an Add
// during processing marked it dirty and Done queued it again.
func sameKeyDedupRecorded(r recorded) Check {
	added := r.of(trace.Added)
	dedup := added.where(func(e trace.Event) bool { return e.Reason == "deduplicated" })
	dirty := added.where(func(e trace.Event) bool { return e.Reason == "dirty" })
	requeued := r.of(trace.Done).where(func(e trace.Event) bool { return e.Reason == "requeued" })
	return check("an Add found the key waiting (deduplicated); one during processing marked it dirty, and Done queued it again",
		len(dedup) > 0 && len(dirty) == 1 && len(requeued) == 1, "deduplicated %d, dirty %d, requeued at Done %d", len(dedup), len(dirty), len(requeued))
}
