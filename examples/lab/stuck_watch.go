package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/pause"
	"github.com/kubeinternals/informers/trace"
)

// stuckWatch: the informer's watch stops delivering without ending — every byte
// between it and the apiserver held, the connection left open — and WatchHealthy,
// with a short threshold, fails; thawed, the held events arrive on the same watch and
// it passes again.
func stuckWatch() Scenario {
	return Scenario{
		Name:     "stuck-watch",
		Question: "My informer's watch stops delivering, but its connection stays open: does anything notice?",
		Why: "Nothing in the watch itself: the stream is open, so the reflector waits on it, no error reaches the WatchErrorHandler and the cache silently stops changing. " +
			"WatchHealthy measures how long the watch has shown no sign of life — no event, no bookmark, no new watch, no relist — and fails past its threshold, the stream open or not. " +
			"Its default, 2 minutes, is two of kube-apiserver's bookmark intervals: the watch cache sends every watch a bookmark about once a minute, however quiet the resource, so a healthy watch is never silent that long; a threshold below that interval (2s here) would fail on any quiet resource, which is why the scenario keeps a writer busy. " +
			"A resource served without a watch cache gets no bookmarks and looks stuck whenever it is quiet; over HTTP/2, client-go's transport pings a connection silent for 30s and closes it 15s later if the ping is not answered, which ends a watch whose whole connection is frozen — but not one stalled behind a proxy that answers pings itself.",
		Read: []string{
			"docs/04-informer.md (Is my watch stuck?) and docs/faq.md #28",
			"informer/stuckwatch.go: SharedIndexInformer.WatchHealthy, Factory.WatchHealthy; reflector/activity.go: WatchActivity, BookmarkInterval; reflector/watch.go: Reflector.handleWatch (where the events are stamped)",
			"examples/foo-controller: -watch-stuck-after, /healthz",
		},
		Fault:    "freezes the informer's connection at the TCP proxy in front of kube-apiserver: every byte held, both ways, the connection left open",
		Run:      runStuckWatch,
		Recorded: stuckWatchRecorded,
	}
}

// The scenario's pace. Why so short a threshold: the lab cannot wait two bookmark
// intervals; a writer that updates a ConfigMap every stuckTick keeps the healthy watch
// delivering far more often than the threshold, as bookmarks do a quiet resource's.
const (
	stuckAfter = 2 * time.Second
	stuckTick  = 200 * time.Millisecond
	// stuckFlowing is how long the scenario probes while the events flow.
	stuckFlowing = 3 * time.Second
)

// The actions the recording is checked by (see stuckWatchRecorded).
const (
	stuckFreezeAction = "freeze every byte between the informer and kube-apiserver"
	stuckThawAction   = "thaw the connection"
)

// tickWriter updates one ConfigMap every stuckTick until stopped, remembering when
// each write was accepted.
type tickWriter struct {
	mu     sync.Mutex
	writes []time.Time // when each PUT returned; guarded by mu
	lastRV string      // the last write's resourceVersion; guarded by mu
	err    error       // the first failed write; guarded by mu
}

// run writes until ctx ends. Owner: runStuckWatch's goroutine, which cancels ctx and
// waits for it.
func (w *tickWriter) run(ctx context.Context, core rest.Interface, cm *corev1.ConfigMap) {
	t := time.NewTicker(stuckTick)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cm.Data["n"] = strconv.Itoa(n)
		err := updateConfigMap(ctx, core, cm)
		w.mu.Lock()
		switch {
		case err == nil:
			w.writes, w.lastRV = append(w.writes, time.Now()), cm.ResourceVersion
		case ctx.Err() == nil && w.err == nil:
			w.err = err
		}
		w.mu.Unlock()
	}
}

// between counts the writes accepted in [from, to).
func (w *tickWriter) between(from, to time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, at := range w.writes {
		if !at.Before(from) && at.Before(to) {
			n++
		}
	}
	return n
}

func (w *tickWriter) last() (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastRV, w.err
}

func runStuckWatch(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "stuck-watch")
	if err != nil {
		return nil, err
	}
	tick := configMap(ns, "tick", "n", "0")
	if err := create(ctx, core, ns, "configmaps", tick); err != nil {
		return nil, err
	}
	inf, err := startObserved[*corev1.ConfigMap](ctx, lab, lab.Watched, configMaps(ns), informer.FactoryOptions{}, nil)
	if err != nil {
		return nil, err
	}
	defer inf.stop()
	r.Do("POST ConfigMap tick into %s, start a ConfigMap informer on it through the proxy and wait for its cache", ns)

	writer := &tickWriter{}
	wctx, stopWriter := context.WithCancel(ctx)
	var wg sync.WaitGroup
	// Goroutine owned by this function: the writer; it exits when stopWriter cancels
	// wctx, which the deferred call does on every path.
	wg.Go(func() { writer.run(wctx, core, tick) })
	defer func() { stopWriter(); wg.Wait() }()
	r.Do("PUT tick every %v, directly (not through the proxy), until the end", stuckTick)

	// While the events flow.
	probes, failures := 0, 0
	var firstFailure error
	for end := time.Now().Add(stuckFlowing); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		probes++
		if err := inf.WatchHealthy(stuckAfter); err != nil {
			failures++
			firstFailure = cmp.Or(firstFailure, err)
		}
	}
	r.Do("for %v, call WatchHealthy(%v) every 100ms", stuckFlowing, stuckAfter)
	r.See("while tick's updates flowed: %d probes, %d failed%s", probes, failures, failedWith(firstFailure))

	// Frozen.
	mark := inf.mark()
	thaw, err := lab.Freeze()
	if err != nil {
		return nil, err
	}
	thawed := false
	defer func() {
		if !thawed {
			thaw()
		}
	}()
	frozenAt := time.Now()
	r.Fault("%s, leaving the connection open; the writer goes on", stuckFreezeAction)
	var stuck error
	if err := await(ctx, stuckAfter+awaitLong, "WatchHealthy to fail", func() bool {
		stuck = inf.WatchHealthy(stuckAfter)
		return stuck != nil
	}); err != nil {
		return nil, err
	}
	failedAt := time.Now()
	activity := inf.WatchActivity()
	r.Do("call WatchHealthy(%v) every 20ms until it fails", stuckAfter)
	r.See("it failed %v after the freeze, %v after the watch's last event: %s",
		failedAt.Sub(frozenAt).Round(time.Millisecond), failedAt.Sub(activity.LastEvent).Round(time.Millisecond), stuck)
	if !pause.For(ctx, time.Second) {
		return nil, ctx.Err()
	}
	still := inf.WatchHealthy(stuckAfter)
	writesFrozen := writer.between(frozenAt, time.Now())
	r.See("a second later: %s", errText(still))
	r.See("meanwhile kube-apiserver accepted %d writes of tick; the watch is open: %v", writesFrozen, inf.WatchActivity().Open)

	// Thawed.
	r.Do("%s: the held bytes flow again; call WatchHealthy(%v) every 20ms until it passes", stuckThawAction, stuckAfter)
	thawAt := time.Now()
	thaw()
	thawed = true
	if err := await(ctx, awaitLong, "WatchHealthy to pass again", func() bool { return inf.WatchHealthy(stuckAfter) == nil }); err != nil {
		return nil, err
	}
	passedAt := time.Now()
	stopWriter()
	wg.Wait()
	lastRV, werr := writer.last()
	if werr != nil {
		return nil, fmt.Errorf("writing tick: %w", werr)
	}
	if err := await(ctx, awaitLong, "the informer to cache tick's last write", func() bool {
		obj, ok, _ := inf.Indexer().GetByKey(ns + "/tick")
		return ok && obj.ResourceVersion == lastRV
	}); err != nil {
		return nil, err
	}
	r.Do("stop the writer and wait until the informer has its last write (resourceVersion %s)", lastRV)

	after := inf.since(mark)
	r.Timeline(stuckTimeline(inf.since(0)[:mark], after, thawAt))
	restarts := count(after, func(e trace.Event) bool {
		return e.Kind == trace.WatchStarted || e.Kind == trace.ListStarted || e.Kind == trace.Relist || e.Kind == trace.WatchEnded
	})
	heldEvents := count(after, func(e trace.Event) bool { return e.Kind == trace.WatchEvent && !e.Time.Before(thawAt) })
	r.See("passed again %v after the thaw; %d watch events arrived after it, on the same watch", passedAt.Sub(thawAt).Round(time.Millisecond), heldEvents)

	r.Check("while the events flowed, every probe passed", probes > 0 && failures == 0, "%d probes, %d failed", probes, failures)
	r.Check("frozen, the watch stayed open and WatchHealthy failed, saying it was silent",
		errors.Is(stuck, informer.ErrWatchStuck) && activity.Open && containsAll(errText(stuck), "open but has delivered nothing"),
		"open %v: %s", activity.Open, errText(stuck))
	r.Check("not before the threshold: it failed once the last event was that old",
		!activity.LastEvent.IsZero() && failedAt.Sub(activity.LastEvent) >= stuckAfter && failedAt.Sub(frozenAt) < stuckAfter+awaitLong,
		"%v after the last event, %v after the freeze", failedAt.Sub(activity.LastEvent).Round(time.Millisecond), failedAt.Sub(frozenAt).Round(time.Millisecond))
	r.Check("the apiserver was fine: it accepted writes all along", writesFrozen > 0, "%d writes while frozen", writesFrozen)
	r.Check("thawed, the held events arrived on the same watch — no new watch, no relist — and the probe passed again",
		still != nil && restarts == 0 && heldEvents > 0, "still failing before the thaw: %v; watches started, ended or lists since the freeze: %d; events after the thaw: %d",
		still != nil, restarts, heldEvents)
	r.Answer = fmt.Sprintf("only a check that asks: frozen, the watch stayed open and delivered nothing, no error was raised, and WatchHealthy(%v) failed %v after the freeze; thawed, the %d held events arrived on the same watch and it passed again %v later",
		stuckAfter, failedAt.Sub(frozenAt).Round(100*time.Millisecond), heldEvents, passedAt.Sub(thawAt).Round(10*time.Millisecond))
	return r, nil
}

// stuckTimeline is the reflector's last watch event before the freeze, what it
// reported after (nothing until the thaw), and the first three watch events after the
// thaw.
func stuckTimeline(before, after []trace.Event, thawAt time.Time) []trace.Event {
	reflector := func(e trace.Event) bool { return e.Stage == trace.Reflector }
	var out []trace.Event
	if events := ofKind(trace.Filter(before, reflector), trace.WatchEvent, ""); len(events) > 0 {
		out = append(out, events[len(events)-1])
	}
	held := 0
	for _, e := range trace.Filter(after, reflector) {
		if e.Kind == trace.WatchEvent && !e.Time.Before(thawAt) {
			if held++; held > 3 {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// failedWith is ", the first: ERR", or "" for nil.
func failedWith(err error) string {
	if err == nil {
		return ""
	}
	return ", the first: " + err.Error()
}

// stuckWatchRecorded: events flowed before the freeze; between the freeze and the
// thaw the reflector was silent for at least the threshold, then the events came on
// the same watch: no watch started or ended, no list, after the freeze.
func stuckWatchRecorded(r recorded) Check {
	isAction := func(what string) func(trace.Event) bool {
		return func(e trace.Event) bool { return e.Kind == trace.Action && containsAll(e.Detail, what) }
	}
	freeze := r.index(isAction(stuckFreezeAction))
	if freeze < 0 {
		return check("a freeze, then a thaw", false, "no action %q", stuckFreezeAction)
	}
	frozen := r[freeze+1:]
	thaw := frozen.index(isAction(stuckThawAction))
	if thaw < 0 {
		return check("a freeze, then a thaw", false, "no action %q after the freeze", stuckThawAction)
	}
	delivered := func(e trace.Event) bool {
		return e.Stage == trace.Reflector && (e.Kind == trace.WatchEvent || e.Kind == trace.Bookmark)
	}
	before := r[:freeze].where(delivered)
	whileFrozen := frozen[:thaw].where(delivered)
	last := r[freeze].Time
	if len(whileFrozen) > 0 {
		last = whileFrozen[len(whileFrozen)-1].Time
	}
	silence := frozen[thaw].Time.Sub(last)
	afterThaw := frozen[thaw+1:].where(delivered)
	restarts := frozen.where(func(e trace.Event) bool {
		return e.Stage == trace.Reflector && (e.Kind == trace.WatchStarted || e.Kind == trace.ListStarted || e.Kind == trace.Relist ||
			e.Kind == trace.WatchEnded && e.Reason != "the context ended")
	})
	return check("events flowed, the frozen watch was silent for at least the threshold, then delivered on the same watch",
		len(before) > 0 && silence >= stuckAfter && len(afterThaw) > 0 && len(restarts) == 0,
		"%d events before the freeze; silent for %v before the thaw; %d events after it; %d watches started or ended, or lists, since the freeze",
		len(before), silence.Round(time.Millisecond), len(afterThaw), len(restarts))
}
