package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
	"github.com/kubeinternals/informers/workqueue"
)

// handlerDoesWork: the same burst and the same work, done in the handler or by a
// worker behind a workqueue of keys; what piles up, and how much memory it holds.
func handlerDoesWork() Scenario {
	return Scenario{
		Name:     "handler-does-work",
		Question: "A handler that does the work itself instead of enqueuing a key: what happens to memory under a burst?",
		Why: "A handler that works falls behind, and every notification it has not reached waits in its listener's unbounded buffer holding the old and new object — so memory grows with the burst, " +
			"the shape of kubernetes/kubernetes#103789 and #102718 (there the backlog was in the queue and the watch stream). " +
			"A handler that only enqueues a key keeps up, and the workqueue holds each key once however many events arrive: memory and work grow with the number of objects, and the worker reads the newest state from the cache.",
		Read: []string{
			"docs/06-controller.md (The rules the pattern follows) and docs/faq.md #2, #7",
			"informer/listener.go: listener.add (the unbounded buffer); workqueue/queue.go: Queue.Add (dirty: a waiting key is not queued twice)",
			"examples/foo-controller/controller/handlers.go: Controller.enqueueFoo",
		},
		Run:      runHandlerDoesWork,
		Recorded: handlerDoesWorkRecorded,
	}
}

const (
	// blobSize is the data each ConfigMap carries: big enough that the objects held
	// dominate the heap the burst adds.
	blobSize = 50 << 10
	// workTakes is the simulated work per reconcile.
	workTakes = 3 * time.Millisecond
	// bigBurstPerMap is the updates per ConfigMap: fewer than slow-handler's, as each
	// carries blobSize (a PUT and a watch event of 50 KiB cost far more under -race).
	bigBurstPerMap = 50
)

// burstMeasure is what one variant measured at the burst's peak.
type burstMeasure struct {
	base, peak uint64 // live heap before the burst and at its peak
	highWater  int    // the handler's listener backlog high-water
	work       int64  // times the work was done
	took       time.Duration
}

// grew is the live heap the burst added, at its peak.
func (m burstMeasure) grew() int64 { return int64(m.peak) - int64(m.base) }

// runHandlerDoesWork runs the same burst against a handler that works and against a
// handler that enqueues keys for a worker, measuring backlog, queue depth and heap.
func runHandlerDoesWork(ctx context.Context, lab *Lab) (*Report, error) {
	const n = burstConfigMaps * bigBurstPerMap
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "handler-does-work")
	if err != nil {
		return nil, err
	}
	blob := strings.Repeat("x", blobSize)
	if err := createConfigMaps(ctx, core, ns, "cm", burstConfigMaps, "blob", blob); err != nil {
		return nil, err
	}
	r.Do("POST %d ConfigMaps of %d KiB each into %s", burstConfigMaps, blobSize>>10, ns)
	tracer, rec := lab.newRecorder()

	a, err := workInHandler(ctx, lab, tracer, ns, blob)
	if err != nil {
		return nil, err
	}
	r.Do("(a) a ConfigMap informer whose handler \"does-work\" does %s of work per update itself; PUT %d updates (%d per ConfigMap); "+
		"measure the live heap (after runtime.GC) once the whole burst has arrived, then let the handler finish", workTakes, n, bigBurstPerMap)
	b, depthAtPeak, err := workInWorker(ctx, lab, tracer, ns, blob)
	if err != nil {
		return nil, err
	}
	r.Do("(b) a fresh informer whose handler \"enqueues\" only adds the key to a workqueue; one worker does the same %s of work per key, reading the object from the cache; "+
		"the same burst and measurement", workTakes)
	r.Do("in both, the work is held back at its first event until the whole burst has arrived, so both are measured at the same point: everything delivered, nothing done")

	events := rec.Events()
	var shown []trace.Event
	for _, h := range []string{"does-work", "enqueues"} {
		shown = append(shown, firstAndLast(trace.Filter(ofKind(events, trace.Buffered, h), func(e trace.Event) bool { return e.Type == "update" }))...)
	}
	adds := ofKind(events, trace.Added, "keys")
	added := map[string]int{}
	maxDepth := 0
	for _, e := range adds {
		added[e.Reason]++
		if e.Reason == "new" {
			maxDepth = max(maxDepth, e.QueueLen)
		}
	}
	shown = append(shown, trace.Filter(adds, func(e trace.Event) bool { return e.Reason == "new" })...)
	slices.SortStableFunc(shown, func(a, b trace.Event) int { return a.Time.Compare(b.Time) })
	r.Timeline(shown)
	r.See("(a) work in the handler: backlog high-water %d; live heap %s → %s (%+d KiB) at the peak; the work ran %d times; drained %s after the burst",
		a.highWater, mib(int64(a.base)), mib(int64(a.peak)), a.grew()>>10, a.work, a.took.Round(time.Millisecond))
	r.See("    the buffer held %d notifications, each pinning a ~%d KiB object (≈ %s)", a.highWater, blobSize>>10, mib(int64(a.highWater)*blobSize))
	r.See("(b) enqueue a key: backlog high-water %d; workqueue depth at most %d (%d at the peak); %d adds: %d new, %d deduplicated, %d marked dirty; "+
		"live heap %s → %s (%+d KiB); the work ran %d times",
		b.highWater, maxDepth, depthAtPeak, len(adds), added["new"], added["deduplicated"], added["dirty"], mib(int64(b.base)), mib(int64(b.peak)), b.grew()>>10, b.work)

	r.Check("(a) the handler's backlog grew with the burst", a.highWater >= n-1, "high-water %d for a burst of %d", a.highWater, n)
	r.Check(fmt.Sprintf("(b) the workqueue never held more than the %d distinct keys", burstConfigMaps), maxDepth <= burstConfigMaps && depthAtPeak <= burstConfigMaps,
		"max depth %d, %d at the peak", maxDepth, depthAtPeak)
	r.Check("(b) the work ran about once per key, not once per event", b.work <= burstConfigMaps+1 && a.work == n,
		"(a) %d times, (b) %d times", a.work, b.work)
	// The heap figures: (a) holds ~n objects of blobSize, (b) ~burstConfigMaps. The
	// claim is loose (a quarter of the expected difference) so that the rest of the
	// heap moving between two measurements cannot decide it.
	r.Check("(a) held far more live heap at the peak than (b): about one object per buffered notification",
		a.grew()-b.grew() >= int64(n)*blobSize/4, "(a) %+d KiB, (b) %+d KiB", a.grew()>>10, b.grew()>>10)
	r.Answer = fmt.Sprintf("it piles up in memory: doing %s of work per event, the handler fell %d notifications behind and the live heap grew by %s at the peak; "+
		"enqueuing keys instead, the queue never held more than %d keys, the heap grew by %s, and the work ran %d times instead of %d",
		workTakes, a.highWater, mib(a.grew()), maxDepth, mib(b.grew()), b.work, a.work)
	return r, nil
}

// workInHandler runs variant (a): the handler does the work for each update.
func workInHandler(ctx context.Context, lab *Lab, tracer *trace.Tracer, ns, blob string) (burstMeasure, error) {
	const n = burstConfigMaps * bigBurstPerMap
	var m burstMeasure
	f, err := lab.Factory(tracer, informer.FactoryOptions{})
	if err != nil {
		return m, err
	}
	defer f.Shutdown()
	inf, err := informer.For[*corev1.ConfigMap](f, configMaps(ns))
	if err != nil {
		return m, err
	}
	gate := make(chan struct{})
	var held sync.Once
	var work atomic.Int64
	reg, err := inf.AddEventHandlerWithOptions(informer.HandlerFuncs[*corev1.ConfigMap]{
		UpdateFunc: func(_, newObj *corev1.ConfigMap) {
			held.Do(func() {
				select {
				case <-gate:
				case <-ctx.Done():
				}
			})
			time.Sleep(workTakes) // simulated work on newObj
			work.Add(1)
		},
	}, informer.HandlerOptions{Name: "does-work"})
	if err != nil {
		return m, err
	}
	opened := false
	defer func() {
		if !opened {
			close(gate) // lets the handler return, so that Shutdown can stop its listener
		}
	}()
	f.Start(ctx)
	if err := informer.WaitForCacheSync(ctx, inf, reg); err != nil {
		return m, err
	}
	m.base = liveHeap()
	if _, err := updateBurst(ctx, lab, ns, "cm", bigBurstPerMap, "blob", blob); err != nil {
		return m, err
	}
	if err := await(ctx, awaitLong, "the burst to reach the handler's buffer", func() bool { return reg.Backlog() == n-1 }); err != nil {
		return m, err
	}
	m.peak, m.highWater = liveHeap(), reg.HighWater()
	opened = true
	close(gate)
	start := time.Now()
	if err := await(ctx, awaitLong, "the handler to finish", func() bool { return work.Load() == n }); err != nil {
		return m, err
	}
	m.work, m.took = work.Load(), time.Since(start)
	return m, nil
}

// workInWorker runs variant (b): the handler enqueues the key, a worker does the work.
// It also returns the queue's depth at the peak.
func workInWorker(ctx context.Context, lab *Lab, tracer *trace.Tracer, ns, blob string) (burstMeasure, int, error) {
	const n = burstConfigMaps * bigBurstPerMap
	var m burstMeasure
	f, err := lab.Factory(tracer, informer.FactoryOptions{})
	if err != nil {
		return m, 0, err
	}
	defer f.Shutdown()
	inf, err := informer.For[*corev1.ConfigMap](f, configMaps(ns))
	if err != nil {
		return m, 0, err
	}
	q := workqueue.NewQueue[string](workqueue.Options{Name: "keys", Tracer: tracer})
	var handled atomic.Int64
	reg, err := inf.AddEventHandlerWithOptions(informer.HandlerFuncs[*corev1.ConfigMap]{
		UpdateFunc: func(_, newObj *corev1.ConfigMap) {
			q.Add(indexer.ObjectKey(newObj.Namespace, newObj.Name))
			handled.Add(1)
		},
	}, informer.HandlerOptions{Name: "enqueues"})
	if err != nil {
		return m, 0, err
	}
	gate := make(chan struct{})
	var held sync.Once
	var work atomic.Int64
	var mu sync.Mutex
	lastSeen := map[string]string{} // key → the "n" the worker last read; guarded by mu
	var worker sync.WaitGroup
	opened := false
	defer func() {
		if !opened {
			close(gate)
		}
		f.Shutdown() // no more adds, then stop the worker
		q.ShutDown()
		worker.Wait()
	}()
	// Owner: this function. Exits when the deferred ShutDown has emptied the queue.
	worker.Go(func() {
		for {
			key, shutdown := q.Get()
			if shutdown {
				return
			}
			held.Do(func() {
				select {
				case <-gate:
				case <-ctx.Done():
				}
			})
			if obj, ok, _ := inf.Indexer().GetByKey(key); ok {
				time.Sleep(workTakes) // simulated work on the newest cached state
				mu.Lock()
				lastSeen[key] = obj.Data["n"]
				mu.Unlock()
				work.Add(1)
			}
			q.Done(key)
		}
	})
	f.Start(ctx)
	if err := informer.WaitForCacheSync(ctx, inf, reg); err != nil {
		return m, 0, err
	}
	m.base = liveHeap()
	final, err := updateBurst(ctx, lab, ns, "cm", bigBurstPerMap, "blob", blob)
	if err != nil {
		return m, 0, err
	}
	if err := await(ctx, awaitLong, "the handler to enqueue the whole burst", func() bool { return handled.Load() == n }); err != nil {
		return m, 0, err
	}
	m.peak, m.highWater = liveHeap(), reg.HighWater()
	depth := q.Len()
	opened = true
	close(gate)
	start := time.Now()
	if err := await(ctx, awaitLong, "the worker to reconcile every ConfigMap's last version", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, cm := range final {
			if lastSeen[ns+"/"+cm.Name] != cm.Data["n"] {
				return false
			}
		}
		return q.Len() == 0
	}); err != nil {
		return m, 0, err
	}
	m.took = time.Since(start)
	// Count the work only once the worker is idle: the key it held at the gate was
	// added again meanwhile and is processed once more.
	f.Shutdown()
	if err := q.ShutDownWithDrain(ctx); err != nil {
		return m, 0, err
	}
	worker.Wait()
	m.work = work.Load()
	return m, depth, nil
}

// handlerDoesWorkRecorded: the handler doing the work built a backlog of the whole
// burst; the workqueue never held more than the distinct keys.
func handlerDoesWorkRecorded(r recorded) Check {
	backlog := r.from("does-work").maxBacklog()
	depth := 0
	for _, e := range r.where(func(e trace.Event) bool { return e.Stage == trace.Workqueue }) {
		depth = max(depth, e.QueueLen)
	}
	return check(fmt.Sprintf("(a) does-work's backlog reached the burst; (b) the workqueue held at most the %d keys", burstConfigMaps),
		backlog >= 199 && depth <= burstConfigMaps, "backlog %d; workqueue depth %d", backlog, depth)
}
