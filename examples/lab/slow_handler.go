package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
)

// slowHandler: two handlers on one informer, one stuck; the other is not delayed, and
// the stuck one's backlog grows in its own buffer and is logged.
func slowHandler() Scenario {
	return Scenario{
		Name:     "slow-handler",
		Question: "A slow handler and a fast one on the same informer: is the fast one delayed?",
		Why: "No: the informer's processing loop appends each notification to every handler's own unbounded buffer and returns; each handler has its own goroutine draining it. " +
			"A slow handler delays only itself — its backlog grows in memory instead (Registration.Backlog and HighWater, and a warning at Options.BacklogWarning, then at each doubling); " +
			"client-go makes the same trade (a growing ring buffer per processorListener) but logs no backlog; it has two slow-call logs instead: processorListener.run logs a handler call over 100ms while more than 1024 notifications wait for that handler, and the queue (DeltaFIFO.Pop, RealFIFO.Pop and PopBatch) logs a processing call over 100ms while more than 10 items are queued — the one log we keep, in deltafifo/pop.go.",
		Read: []string{
			"docs/04-informer.md (Walk through the code) and docs/faq.md #2, #7",
			"informer/processor.go: sharedProcessor.distribute; informer/listener.go: listener.add, listener.run",
			"informer/registration.go: Registration.Backlog, Registration.HighWater",
		},
		Run:      runSlowHandler,
		Recorded: slowHandlerRecorded,
	}
}

// backlogWarnAt is the backlog at which the listener first warns (then at 2×, 4×).
const backlogWarnAt = 64

// runSlowHandler bursts updates at an informer with a fast handler and a held one, and
// measures what each got and how far behind the held one fell.
func runSlowHandler(ctx context.Context, lab *Lab) (*Report, error) {
	const n, slowTakes = burstConfigMaps * burstPerMap, 2 * time.Millisecond
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "slow-handler")
	if err != nil {
		return nil, err
	}
	if err := createConfigMaps(ctx, core, ns, "cm", burstConfigMaps); err != nil {
		return nil, err
	}
	r.Do("POST %d ConfigMaps into %s", burstConfigMaps, ns)

	logs := &lockedBuffer{}
	o, err := newObserved[*corev1.ConfigMap](lab, lab.Watched, configMaps(ns), informer.FactoryOptions{
		BacklogWarning: backlogWarnAt,
		Logger:         lab.logTo(logs, slog.LevelWarn),
	})
	if err != nil {
		return nil, err
	}
	inf, rec := o.SharedIndexInformer, o.rec

	runCtx, cancel := context.WithCancel(ctx)
	gate := make(chan struct{})
	var fastN, slowN atomic.Int64
	var stuck sync.Once
	fastReg, err := inf.AddEventHandlerWithOptions(informer.HandlerFuncs[*corev1.ConfigMap]{
		UpdateFunc: func(_, _ *corev1.ConfigMap) { fastN.Add(1) },
	}, informer.HandlerOptions{Name: "fast"})
	if err != nil {
		cancel()
		return nil, err
	}
	slowReg, err := inf.AddEventHandlerWithOptions(informer.HandlerFuncs[*corev1.ConfigMap]{
		UpdateFunc: func(_, _ *corev1.ConfigMap) {
			// Held at its first update until the fast one has handled the whole
			// burst: a stand-in for a call that hangs, and what makes the comparison
			// independent of how fast this machine is.
			stuck.Do(func() {
				select {
				case <-gate:
				case <-runCtx.Done():
				}
			})
			time.Sleep(slowTakes) // simulated work
			slowN.Add(1)
		},
	}, informer.HandlerOptions{Name: "slow"})
	if err != nil {
		cancel()
		return nil, err
	}
	o.factory.Start(runCtx)
	opened := false
	defer func() {
		if !opened {
			close(gate)
		}
		cancel()
		o.stop()
	}()
	if err := informer.WaitForCacheSync(ctx, inf, fastReg, slowReg); err != nil {
		return nil, err
	}
	r.Do("start a ConfigMap informer (BacklogWarning %d, logging to a buffer) with two handlers: \"fast\" counts updates; \"slow\" takes %s per update "+
		"and is held at its first update until the fast one has handled them all", backlogWarnAt, slowTakes)

	burstAt := time.Now()
	final, err := updateBurst(ctx, lab, ns, "cm", burstPerMap)
	if err != nil {
		return nil, err
	}
	burstTook := time.Since(burstAt)
	r.Do("PUT %d updates, %d to each ConfigMap, one writer per ConfigMap (%s)", n, burstPerMap, burstTook.Round(time.Millisecond))
	// Wait until the fast one has handled everything and the slow one's buffer holds
	// the rest of the burst. If the slow handler held up the informer, this would
	// time out with the fast count short.
	fastErr := await(ctx, awaitLong, "the fast handler to handle the burst and the slow one to buffer it", func() bool {
		return fastN.Load() == n && slowReg.Backlog() == n-1
	})
	fastDoneAt := time.Now()
	fastGot, slowGot, slowBacklog, fastHW := fastN.Load(), slowN.Load(), slowReg.Backlog(), fastReg.HighWater()
	cacheCurrent := 0
	for _, cm := range final {
		if c, ok, _ := inf.Indexer().GetByKey(ns + "/" + cm.Name); ok && c.ResourceVersion == cm.ResourceVersion {
			cacheCurrent++
		}
	}
	opened = true
	close(gate)
	r.Do("then open the slow handler's gate and wait until it has handled them all")
	if err := await(ctx, awaitLong, "the slow handler to drain its backlog", func() bool { return slowN.Load() == n }); err != nil {
		return nil, err
	}
	slowDoneAt := time.Now()
	slowHW := slowReg.HighWater()

	events := rec.Events()
	var shown []trace.Event
	for _, h := range []string{"fast", "slow"} {
		for _, k := range []trace.Kind{trace.Buffered, trace.HandlerReturned} {
			updates := trace.Filter(ofKind(events, k, h), func(e trace.Event) bool { return e.Type == "update" })
			shown = append(shown, firstAndLast(updates)...)
		}
	}
	slices.SortStableFunc(shown, func(a, b trace.Event) int { return a.Time.Compare(b.Time) })
	r.Timeline(shown)
	lastFanOut := lastUpdate(ofKind(events, trace.FannedOut, ""))
	fastLast := lastUpdate(ofKind(events, trace.HandlerReturned, "fast"))
	slowLast := lastUpdate(ofKind(events, trace.HandlerReturned, "slow"))
	r.See("the last update was fanned out %s after the burst began; the fast handler returned from it %s later, the slow one %s later",
		lastFanOut.Sub(burstAt).Round(time.Millisecond), fastLast.Sub(lastFanOut).Round(time.Microsecond), slowLast.Sub(lastFanOut).Round(time.Millisecond))
	r.See("when the fast handler had handled all %d: slow had handled %d, backlog %d; the cache held the last version of %d of %d ConfigMaps",
		fastGot, slowGot, slowBacklog, cacheCurrent, burstConfigMaps)
	r.See("HighWater: fast %d, slow %d (largest Backlog in the trace: fast %d, slow %d)", fastHW, slowHW, maxBacklog(events, "fast"), maxBacklog(events, "slow"))
	warnings := logs.linesWith("falling behind")
	r.See("the informer's log (%d warnings):", len(warnings))
	for _, l := range warnings {
		r.See("  %s", withoutTime(l))
	}
	slowWarnings := logs.linesWith("falling behind", "handler=slow")
	fastWarnings := logs.linesWith("falling behind", "handler=fast")
	var warnedAt []string
	for _, l := range slowWarnings {
		if _, v, ok := strings.Cut(l, "backlog="); ok {
			warnedAt = append(warnedAt, strings.Fields(v)[0])
		}
	}

	r.Check("the fast handler handled the whole burst while the slow one was still on its first update", fastErr == nil && fastGot == n && slowGot == 0,
		"fast %d of %d, slow %d", fastGot, n, slowGot)
	r.Check("the informer went on too: the cache held every ConfigMap's last version", cacheCurrent == burstConfigMaps,
		"%d of %d current", cacheCurrent, burstConfigMaps)
	r.Check("the burst waited in the slow handler's own buffer", slowBacklog == n-1 && slowHW >= n-1,
		"backlog %d then, HighWater %d", slowBacklog, slowHW)
	// Why a quarter: the fast handler's backlog depends on how soon its goroutine is
	// scheduled (here it is the 4 initial adds); the claim allows for a loaded machine.
	r.Check("the fast handler's backlog stayed far below the slow one's", fastHW*4 < slowHW,
		"HighWater fast %d, slow %d", fastHW, slowHW)
	r.Check(fmt.Sprintf("the backlog warning was logged for the slow handler at %d, %d and %d", backlogWarnAt, 2*backlogWarnAt, 4*backlogWarnAt),
		slices.Equal(warnedAt, []string{strconv.Itoa(backlogWarnAt), strconv.Itoa(2 * backlogWarnAt), strconv.Itoa(4 * backlogWarnAt)}),
		"slow warned at %v; the fast one %d times", warnedAt, len(fastWarnings))
	r.Check("the slow handler lost nothing: it handled all of them once released", slowN.Load() == n, "%d of %d", slowN.Load(), n)
	r.Answer = fmt.Sprintf("no: the fast handler returned from the last of %d updates %s after its fan-out (HighWater %d) while the slow one was stuck on its first; "+
		"the slow one's backlog grew to %d in its own buffer (warned at %s) and it finished %s after the fast one",
		n, fastLast.Sub(lastFanOut).Round(time.Microsecond), fastHW, slowHW, strings.Join(warnedAt, ", "), slowDoneAt.Sub(fastDoneAt).Round(time.Millisecond))
	return r, nil
}

// lastUpdate is the time of the last update event, or the zero time.
func lastUpdate(events []trace.Event) time.Time {
	var t time.Time
	for _, e := range events {
		if e.Type == "update" {
			t = e.Time
		}
	}
	return t
}

// slowHandlerRecorded: the burst waited in the slow handler's own buffer while the
// fast one's stayed small, and the listener's warning is among the recorded log lines,
// after the notification that took the slow backlog to the threshold.
func slowHandlerRecorded(r recorded) Check {
	slow, fast := r.from("slow").maxBacklog(), r.from("fast").maxBacklog()
	reached := r.from("slow").index(func(e trace.Event) bool { return e.Kind == trace.Buffered && e.Backlog == backlogWarnAt })
	warned := r.index(func(e trace.Event) bool {
		return e.Kind == trace.Logged && e.Type == "WARN" && strings.Contains(e.Detail, "falling behind") &&
			strings.Contains(e.Attrs, "handler=slow") && strings.Contains(e.Attrs, fmt.Sprintf("backlog=%d", backlogWarnAt))
	})
	var at trace.Event
	if reached >= 0 {
		at = r.from("slow")[reached]
	}
	return check("the slow handler's backlog grew to the burst, the fast one's stayed far below it, and the recording logs the warning at the threshold",
		slow >= 299 && fast*4 < slow && reached >= 0 && warned >= 0 && !r[warned].Time.Before(at.Time),
		"slow %d, fast %d; the warning at backlog %d logged: %t", slow, fast, backlogWarnAt, warned >= 0)
}
