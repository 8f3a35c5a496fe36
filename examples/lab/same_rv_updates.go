package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
	"github.com/kubeinternals/informers/workqueue"
)

// sameRVUpdates: the updates a resync delivers carry an unchanged resourceVersion;
// filtering them out costs a controller its periodic repair of state it does not watch.
func sameRVUpdates() Scenario {
	return Scenario{
		Name:     "same-rv-updates",
		Question: "Should UpdateFunc enqueue when old and new share a resourceVersion?",
		Why: "Those updates are not changes: a periodic resync replays every cached object as OnUpdate(obj, obj), and a relist does the same for every object it finds unchanged. " +
			"Dropping them saves work when the controller's output is also watched (a change there enqueues the owner, as the Foo controller does for its Deployments), " +
			"but a controller whose output it does not watch has only the resync to notice that someone changed it — filter them out and that drift is never repaired.",
		Read: []string{
			"docs/04-informer.md (Resync) and docs/faq.md #8",
			"informer/deltas.go: SharedIndexInformer.distributeUpdate; reflector/resync.go: Reflector.resyncLoop",
			"examples/foo-controller/controller/handlers.go: Controller.onDeploymentUpdate (a filter that is safe there)",
		},
		Run:      runSameRVUpdates,
		Recorded: sameRVUpdatesRecorded,
	}
}

// mirrorController copies its source ConfigMap's data into a target ConfigMap that
// its informer does not watch: a handler that enqueues the source's key, one worker
// that reconciles it.
type mirrorController struct {
	name   string // the handler's and the queue's name in the trace
	filter bool   // drop updates whose old and new share a resourceVersion
	target string // the ConfigMap it writes
	core   rest.Interface
	cache  indexer.Indexer[*corev1.ConfigMap]
	queue  *workqueue.Queue[string]
	tracer *trace.Tracer

	mu sync.Mutex
	// Guarded by mu: same-rv updates received, and the repairs (writes to the
	// target) with when they happened.
	sameRV  int
	repairs []time.Time
}

// handler is the controller's event handler: every add and update enqueues the
// source's key, except same-rv updates when filter is set.
func (c *mirrorController) handler() informer.HandlerFuncs[*corev1.ConfigMap] {
	return informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(obj *corev1.ConfigMap, _ bool) { c.queue.Add(indexer.ObjectKey(obj.Namespace, obj.Name)) },
		UpdateFunc: func(oldObj, newObj *corev1.ConfigMap) {
			if oldObj.ResourceVersion == newObj.ResourceVersion {
				c.mu.Lock()
				c.sameRV++
				c.mu.Unlock()
				if c.filter {
					return // "nothing changed": the filter under test
				}
			}
			c.queue.Add(indexer.ObjectKey(newObj.Namespace, newObj.Name))
		},
	}
}

// run is the worker: it reconciles keys until the queue shuts down.
func (c *mirrorController) run(ctx context.Context) {
	for {
		key, shutdown := c.queue.Get()
		if shutdown {
			return
		}
		start := time.Now()
		err := c.reconcile(ctx, key)
		c.tracer.Reconciled(c.name, key, time.Since(start), err)
		c.queue.Done(key)
	}
}

// reconcile makes the target's data equal to the cached source's.
func (c *mirrorController) reconcile(ctx context.Context, key string) error {
	src, ok, err := c.cache.GetByKey(key)
	if err != nil || !ok {
		return err
	}
	target := &corev1.ConfigMap{}
	if err := c.core.Get().Namespace(src.Namespace).Resource("configmaps").Name(c.target).Do(ctx).Into(target); err != nil {
		return err
	}
	if maps.Equal(target.Data, src.Data) {
		return nil
	}
	target.Data = maps.Clone(src.Data)
	if err := updateConfigMap(ctx, c.core, target); err != nil {
		return err // a conflict: the next event or resync tries again
	}
	c.mu.Lock()
	c.repairs = append(c.repairs, time.Now())
	c.mu.Unlock()
	return nil
}

// counts returns the same-rv updates received so far and the repairs' times.
func (c *mirrorController) counts() (sameRV int, repairs []time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sameRV, append([]time.Time(nil), c.repairs...)
}

// targetData GETs ns/name's data.
func targetData(ctx context.Context, core rest.Interface, ns, name string) (map[string]string, error) {
	cm := &corev1.ConfigMap{}
	err := core.Get().Namespace(ns).Resource("configmaps").Name(name).Do(ctx).Into(cm)
	return cm.Data, err
}

// resyncsToWait is how many resyncs the filtering controller is given to repair the
// drift (it never does).
const resyncsToWait = 3

// runSameRVUpdates runs two mirror controllers, one filtering same-rv updates, changes
// both mirrors behind their backs, and waits a few resyncs.
func runSameRVUpdates(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "same-rv-updates")
	if err != nil {
		return nil, err
	}
	src := configMap(ns, "source", "color", "blue")
	if err := create(ctx, core, ns, "configmaps", src); err != nil {
		return nil, err
	}
	for _, name := range []string{"mirror-filtered", "mirror-unfiltered"} {
		cm := configMap(ns, name)
		cm.Labels = nil // not the lab's label: the informer does not see the mirrors
		if err := create(ctx, core, ns, "configmaps", cm); err != nil {
			return nil, err
		}
	}
	r.Do("POST ConfigMap source {color: blue} (watched) and two unwatched, unlabelled ConfigMaps mirror-filtered and mirror-unfiltered into %s", ns)

	o, err := newObserved[*corev1.ConfigMap](lab, lab.Watched, configMaps(ns), informer.FactoryOptions{ResyncPeriod: resyncEvery})
	if err != nil {
		return nil, err
	}
	defer o.stop()
	f, tracer, rec, inf := o.factory, o.tracer, o.rec, o.SharedIndexInformer
	ctrls := []*mirrorController{
		{name: "filtered", filter: true, target: "mirror-filtered"},
		{name: "unfiltered", target: "mirror-unfiltered"},
	}
	var regs []informer.Syncer
	for _, c := range ctrls {
		c.core, c.cache, c.tracer = core, inf.Indexer(), tracer
		c.queue = workqueue.NewQueue[string](workqueue.Options{Name: c.name, Tracer: tracer})
		reg, err := inf.AddEventHandlerWithOptions(c.handler(), informer.HandlerOptions{Name: c.name})
		if err != nil {
			return nil, err
		}
		regs = append(regs, reg)
	}
	var workers sync.WaitGroup
	defer func() {
		// The informer first, so that no handler adds to a queue after its shutdown.
		f.Shutdown()
		for _, c := range ctrls {
			c.queue.ShutDown()
		}
		workers.Wait()
	}()
	for _, c := range ctrls {
		// Owner: this scenario. Exits when the deferred ShutDown empties its queue.
		workers.Go(func() { c.run(ctx) })
	}
	f.Start(ctx)
	if err := informer.WaitForCacheSync(ctx, append([]informer.Syncer{inf}, regs...)...); err != nil {
		return nil, err
	}
	r.Do("run two mirror controllers on one ConfigMap informer (resync every %s): each handler enqueues source's key, a worker copies its data into the controller's mirror; "+
		"\"filtered\" drops updates whose old and new resourceVersions are equal, \"unfiltered\" does not", resyncEvery)
	mirrored := func(name string) func() bool {
		return func() bool {
			d, err := targetData(ctx, core, ns, name)
			return err == nil && maps.Equal(d, src.Data)
		}
	}
	for _, c := range ctrls {
		if err := await(ctx, awaitLong, c.target+" to mirror source", mirrored(c.target)); err != nil {
			return nil, err
		}
	}
	r.Do("wait until both mirrors hold {color: blue}")

	// The drift: someone else changes both mirrors. Counting starts before the first
	// write, so that a resync between the two writes is counted on both sides.
	before := map[string]int{}
	for _, c := range ctrls {
		before[c.name], _ = c.counts()
	}
	driftAt := time.Now()
	for _, c := range ctrls {
		cm := &corev1.ConfigMap{}
		if err := core.Get().Namespace(ns).Resource("configmaps").Name(c.target).Do(ctx).Into(cm); err != nil {
			return nil, err
		}
		cm.Data = map[string]string{"color": "drifted"}
		if err := updateConfigMap(ctx, core, cm); err != nil {
			return nil, err
		}
	}
	r.Do("PUT {color: drifted} into both mirrors, behind the controllers' backs")
	if err := await(ctx, awaitLong, "the unfiltered controller to repair its mirror", mirrored("mirror-unfiltered")); err != nil {
		return nil, err
	}
	repairedIn := time.Since(driftAt)
	resyncs := func() int {
		return count(rec.Events(), func(e trace.Event) bool {
			return e.Kind == trace.ResyncTick && e.Reason == "resyncing the store" && e.Time.After(driftAt)
		})
	}
	if err := await(ctx, awaitLong, fmt.Sprintf("%d resyncs after the drift", resyncsToWait), func() bool {
		n, _ := ctrls[0].counts()
		return resyncs() >= resyncsToWait && n-before["filtered"] >= resyncsToWait
	}); err != nil {
		return nil, err
	}
	r.Do("wait until the unfiltered mirror is repaired, then until %d resyncs have reached the filtered controller", resyncsToWait)
	filteredData, err := targetData(ctx, core, ns, "mirror-filtered")
	if err != nil {
		return nil, err
	}
	checkedAt := time.Since(driftAt)

	events := rec.Events()
	srcKey := ns + "/source"
	sourceChanges := count(events, func(e trace.Event) bool {
		return e.Kind == trace.WatchEvent && e.Key == srcKey && e.Time.After(driftAt)
	})
	fSame, fRepairs := ctrls[0].counts()
	uSame, uRepairs := ctrls[1].counts()
	fSame -= before["filtered"]
	uSame -= before["unfiltered"]
	fLate, uLate := since(fRepairs, driftAt), since(uRepairs, driftAt)
	// What each handler put into its queue after the drift, as the queue saw it.
	enqueued := func(queue string) int {
		return count(events, func(e trace.Event) bool {
			return e.Stage == trace.Workqueue && e.Kind == trace.Added && e.Source == queue && e.Time.After(driftAt)
		})
	}
	fEnq, uEnq := enqueued("filtered"), enqueued("unfiltered")

	// From the drift to the unfiltered controller's repair.
	var until time.Time
	if len(uLate) > 0 {
		until = uLate[0].Add(time.Millisecond)
	}
	r.Timeline(trace.Filter(events, func(e trace.Event) bool {
		if !e.Time.After(driftAt) || (!until.IsZero() && e.Time.After(until)) {
			return false
		}
		switch e.Kind {
		case trace.ResyncTick, trace.HandlerCalled, trace.Added, trace.Reconciled:
			return e.Kind == trace.ResyncTick || e.Key == srcKey
		}
		return false
	}))
	r.See("after the drift: %d resyncs, %d watch events for source (it never changed)", resyncs(), sourceChanges)
	r.See("filtered:   %d same-rv updates received, %d enqueued, %d repairs; mirror-filtered is %s %s after the drift",
		fSame, fEnq, len(fLate), dataText(filteredData), checkedAt.Round(time.Millisecond))
	r.See("unfiltered: %d same-rv updates received, %d enqueued, %d repairs; mirror-unfiltered repaired %s after the drift",
		uSame, uEnq, len(uLate), repairedIn.Round(time.Millisecond))

	r.Check("the source did not change: every update the handlers got after the drift had old and new at the same resourceVersion",
		sourceChanges == 0 && fSame >= resyncsToWait && uSame >= 1, "%d source changes; same-rv updates: filtered %d, unfiltered %d", sourceChanges, fSame, uSame)
	r.Check("without the filter, a resync enqueued the key and the worker repaired the drift", uEnq >= 1 && len(uLate) >= 1 && mirrored("mirror-unfiltered")(),
		"%d enqueued, %d repair(s), %s after the drift", uEnq, len(uLate), repairedIn.Round(time.Millisecond))
	r.Check(fmt.Sprintf("with the filter, the drift was never repaired, %d resyncs later", resyncsToWait),
		len(fLate) == 0 && filteredData["color"] == "drifted" && fEnq == 0,
		"mirror-filtered %s, %d enqueued, %d repairs, %d same-rv updates dropped", dataText(filteredData), fEnq, len(fLate), fSame)
	r.Answer = fmt.Sprintf("it depends on what the controller watches: here the source never changed, so every update after the drift was a resync; "+
		"the controller that kept them repaired its unwatched mirror %s after the drift, the one that dropped them (%d same-rv updates) still had %s after %d resyncs",
		repairedIn.Round(time.Millisecond), fSame, dataText(filteredData), resyncs())
	return r, nil
}

// dataText prints a ConfigMap's data as {k: v, …}, keys sorted.
func dataText(data map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(data)) {
		parts = append(parts, k+": "+data[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// since keeps the times after t.
func since(times []time.Time, t time.Time) []time.Time {
	var out []time.Time
	for _, x := range times {
		if x.After(t) {
			out = append(out, x)
		}
	}
	return out
}

// sameRVUpdatesRecorded: after the drift, the handlers' updates were resyncs at the
// source's one resourceVersion; only the unfiltered controller reconciled.
func sameRVUpdatesRecorded(r recorded) Check {
	drift := r.after("PUT {color: drifted}")
	updates := drift.of(trace.HandlerCalled).where(func(e trace.Event) bool { return e.Type == "update" })
	rvs := map[string]bool{}
	for _, e := range updates {
		rvs[e.ResourceVersion] = true
	}
	filtered, unfiltered := drift.of(trace.Reconciled).from("filtered"), drift.of(trace.Reconciled).from("unfiltered")
	return check("after the drift, every update was a resync at one resourceVersion; the unfiltered controller reconciled, the filtered one never",
		len(updates) >= 6 && len(rvs) == 1 && len(unfiltered) >= 1 && len(filtered) == 0,
		"%d updates at %d resourceVersion(s); syncs: unfiltered %d, filtered %d", len(updates), len(rvs), len(unfiltered), len(filtered))
}
