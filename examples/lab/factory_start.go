package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
)

// factoryStart: Start runs the informers that exist when it is called, each on its own
// goroutine; an informer requested afterwards does nothing until Start is called again.
func factoryStart() Scenario {
	return Scenario{
		Name:     "factory-start",
		Question: "What does factory Start do — which goroutines, when does listing begin — and what happens to an informer requested after Start?",
		Why: "For only builds an informer; Start launches one goroutine per informer not yet started, which calls Run: Run starts the processor (a goroutine, which starts one more per handler), " +
			"the reflector (at once it opens a watch-list — client-go 1.37's default; the classic pipeline LISTs — and goes on watching on the same stream) and runs the processing loop itself — N + 3 goroutines for N handlers — " +
			"and the stream has its own: a watch-list's is read by one goroutine, decoded by one per processor (at most 4) and handed over in order by one more; a plain watch's, by one. " +
			"An informer requested after Start is not running: nothing lists, Factory.WaitForCacheSync returns ErrNotStarted naming it (client-go's skips it and reports success with the cache empty — kubernetes/kubernetes#92777), waiting on the informer itself blocks until the context ends, and only a second Start (which starts nothing twice) brings it up.",
		Read: []string{
			"docs/04-informer.md (The goroutines of one running informer) and docs/faq.md #14",
			"informer/factory.go: For, Factory.Start, Factory.WaitForCacheSync",
			"informer/run.go: SharedIndexInformer.Run; informer/wait.go: WaitForCacheSync",
		},
		Run:      runFactoryStart,
		Recorded: factoryStartRecorded,
	}
}

// lateWait bounds the wait on the informer requested after Start, which never syncs.
const lateWait = time.Second

// runFactoryStart starts a factory with one informer, counts the goroutines Start adds,
// then requests a second informer after Start and waits on it before and after a
// second Start.
func runFactoryStart(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "factory-start")
	if err != nil {
		return nil, err
	}
	o, err := newObserved[*corev1.ConfigMap](lab, lab.Watched, configMaps(ns), informer.FactoryOptions{})
	if err != nil {
		return nil, err
	}
	defer o.stop()
	f, rec, cms := o.factory, o.rec, o.SharedIndexInformer
	reg, err := cms.AddEventHandlerWithOptions(informer.HandlerFuncs[*corev1.ConfigMap]{}, informer.HandlerOptions{Name: "noop"})
	if err != nil {
		return nil, err
	}
	forAt := time.Now()
	r.Do("For[*ConfigMap](factory, ConfigMaps of %s) and add one (empty) handler", ns)

	// Objects for both informers, written after For: the time it takes is time in
	// which an unstarted informer could have listed, and did not.
	if err := createConfigMaps(ctx, core, ns, "cm", 3); err != nil {
		return nil, err
	}
	for i := range 2 {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("secret-%d", i), Namespace: ns, Labels: map[string]string{labLabel: "true"}}}
		if err := create(ctx, core, ns, "secrets", s); err != nil {
			return nil, err
		}
	}
	r.Do("POST 3 ConfigMaps and 2 Secrets into %s", ns)
	eventsBeforeStart := len(rec.Events())
	idle := time.Since(forAt)
	before := libraryGoroutines()

	startAt := time.Now()
	// Why reported before the call: the recording's mark must precede every event
	// Start causes, so that "nothing before Start" can be read from it.
	r.Do("factory.Start(ctx), then WaitForCacheSync(ConfigMaps informer)")
	f.Start(ctx)
	if err := informer.WaitForCacheSync(ctx, cms, reg); err != nil {
		return nil, err
	}
	// A change that can only arrive through the watch: once it is cached the WATCH is
	// open, and with it every goroutine a running informer has.
	if err := create(ctx, core, ns, "configmaps", configMap(ns, "after-start")); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "the ConfigMap informer to see after-start", cached(cms, ns+"/after-start")); err != nil {
		return nil, err
	}
	// The sync watcher exits once it has announced the sync; wait for that rather
	// than count a goroutine that is on its way out.
	if err := await(ctx, awaitLong, "Run's sync watcher to exit", syncWatcherExited); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMap after-start and wait until the informer has it (so its WATCH is open) and Run's sync watcher has exited")
	afterStart := libraryGoroutines()
	added := goroutinesAdded(before, afterStart)
	started := rec.Events()
	firstList := ofKind(started, trace.ListStarted, "configmaps")

	// The informer requested after Start.
	secrets, err := informer.For[*corev1.Secret](f, labelled(ns, "secrets"))
	if err != nil {
		return nil, err
	}
	r.Do("For[*Secret](factory, Secrets of %s) — after Start", ns)
	lateStarted := secrets.HasStarted()
	t0 := time.Now()
	factoryErr := f.WaitForCacheSync(ctx)
	factoryTook := time.Since(t0)
	secretsCachedThen := len(secrets.Indexer().ListKeys())
	r.Do("factory.WaitForCacheSync(ctx), then informer.WaitForCacheSync(ctx with a %s timeout, Secrets informer)", lateWait)
	// Why t0 first: the deadline counts from WithTimeout; timed from after it, the
	// wait could measure a hair under lateWait.
	t0 = time.Now()
	wctx, cancel := context.WithTimeout(ctx, lateWait)
	lateErr := informer.WaitForCacheSync(wctx, secrets)
	lateTook := time.Since(t0)
	cancel()
	secretListsBefore := len(ofKind(rec.Events(), trace.ListStarted, "secrets"))

	// Start again.
	beforeSecond := libraryGoroutines()
	secondAt := time.Now()
	r.Do("factory.Start(ctx) again, then WaitForCacheSync(Secrets informer)")
	f.Start(ctx)
	if err := informer.WaitForCacheSync(ctx, secrets); err != nil {
		return nil, err
	}
	late := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "after-second-start", Namespace: ns, Labels: map[string]string{labLabel: "true"}}}
	if err := create(ctx, core, ns, "secrets", late); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "the Secrets informer to see after-second-start", cached(secrets, ns+"/after-second-start")); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "Run's sync watcher to exit", syncWatcherExited); err != nil {
		return nil, err
	}
	r.Do("POST Secret after-second-start and wait until the informer has it")
	addedSecond := goroutinesAdded(beforeSecond, libraryGoroutines())
	all := rec.Events()
	cmLists := len(ofKind(all, trace.ListStarted, "configmaps"))
	secretLists := ofKind(all, trace.ListStarted, "secrets")

	// What we saw.
	r.See("trace events between For and Start (%s): %d", idle.Round(time.Millisecond), eventsBeforeStart)
	r.Timeline(kinds(all, trace.ListStarted, trace.Listed, trace.WatchStarted))
	if len(firstList) > 0 {
		r.See("the ConfigMaps %s began %s after the Start call; the Secrets one %s after the second Start", firstList[0].Type,
			firstList[0].Time.Sub(startAt).Round(time.Microsecond), offsetOf(secretLists, secondAt))
	}
	r.See("library goroutines Start added (1 informer, 1 handler), from the goroutine profile:")
	for _, l := range describeGoroutines(added) {
		r.See("  %s", l)
	}
	r.See("the Secrets informer, requested after Start: HasStarted()=%v; lists (watch-list or LIST) for it: %d", lateStarted, secretListsBefore)
	r.See("  factory.WaitForCacheSync returned %v after %s, with %d Secrets cached", errText(factoryErr), factoryTook.Round(time.Microsecond), secretsCachedThen)
	r.See("  informer.WaitForCacheSync(Secrets) returned after %s: %v", lateTook.Round(time.Millisecond), errText(lateErr))
	r.See("library goroutines the second Start added (1 informer, no handler):")
	for _, l := range describeGoroutines(addedSecond) {
		r.See("  %s", l)
	}

	// The open watch is the watch-list's own stream, decoded by one goroutine per
	// processor (at most 4) and two more; on one processor, by one goroutine.
	decoders := min(runtime.GOMAXPROCS(0), 4)
	wantFirst := map[string]int{
		"SharedIndexInformer.Run → processLoop: pops the queue, writes the cache": 1,
		"sharedProcessor.run: the processor":                                      1,
		"listener.run: one handler's goroutine":                                   1,
		"Reflector.Run: watch-list (or LIST), then WATCH":                         1,
	}
	if decoders > 1 {
		wantFirst["streamWatch.receiveConcurrently: a watch-list's reader"] = 1
		wantFirst["streamWatch.decode: one of a watch-list's decoders"] = decoders
		wantFirst["streamWatch.emit: hands a watch-list's events over in order"] = 1
	} else {
		wantFirst["streamWatch.receive: the open watch's decoder"] = 1
	}
	wantSecond := map[string]int{}
	for role, n := range wantFirst {
		if !strings.HasPrefix(role, "listener.run") {
			wantSecond[role] = n
		}
	}
	r.Check("nothing happened before Start: no list, no trace event at all", eventsBeforeStart == 0,
		"%d events in the %s between For and Start", eventsBeforeStart, idle.Round(time.Millisecond))
	r.Check("Start began the list right away, from a goroutine of its own", len(firstList) == 1 && firstList[0].Time.After(startAt),
		"%d ConfigMaps list (%s), %s after Start", len(firstList), listsOf(firstList), offsetOf(firstList, startAt))
	r.Check(fmt.Sprintf("Start added N + 3 goroutines for 1 handler (Run/processLoop, processor, 1 listener, reflector), and %d for the open watch-list stream", max(1, decoders+2)),
		sameCounts(added, wantFirst), "%d added: %s", total(added), summary(added))
	r.Check("the informer requested after Start was not running", !lateStarted && secretListsBefore == 0,
		"HasStarted()=%v, %d Secrets lists", lateStarted, secretListsBefore)
	r.Check("factory.WaitForCacheSync refused at once with ErrNotStarted, naming the Secrets informer; its cache was empty",
		errors.Is(factoryErr, informer.ErrNotStarted) && strings.Contains(errText(factoryErr), "secrets") && factoryTook < lateWait && secretsCachedThen == 0,
		"returned %v after %s, %d Secrets cached", errText(factoryErr), factoryTook.Round(time.Microsecond), secretsCachedThen)
	r.Check("waiting on it blocked until the context ended, then returned ErrNotSynced",
		errors.Is(lateErr, informer.ErrNotSynced) && errors.Is(lateErr, context.DeadlineExceeded) && lateTook >= lateWait,
		"after %s: %v", lateTook.Round(time.Millisecond), errText(lateErr))
	r.Check("the second Start started only the new informer", cmLists == 1 && len(secretLists) == 1 && sameCounts(addedSecond, wantSecond),
		"ConfigMaps lists %d, Secrets lists %d; %d goroutines added: %s", cmLists, len(secretLists), total(addedSecond), summary(addedSecond))
	r.Answer = fmt.Sprintf("Start launched %d goroutines for 1 informer with 1 handler and its list (%s) began %s later; an informer requested after Start stayed idle "+
		"(no list; factory.WaitForCacheSync returned ErrNotStarted at once, waiting on the informer blocked for the whole %s timeout) until a second Start, which added %d goroutines for it alone",
		total(added), listsOf(firstList), offsetOf(firstList, startAt), lateWait, total(addedSecond))
	return r, nil
}

// offsetOf is how long after t the first event came, or "(never)".
func offsetOf(events []trace.Event, t time.Time) string {
	if len(events) == 0 {
		return "(never)"
	}
	return events[0].Time.Sub(t).Round(time.Microsecond).String()
}

// sameCounts reports whether groups has exactly the roles of want, with those counts.
func sameCounts(groups map[string]goroutineGroup, want map[string]int) bool {
	if len(groups) != len(want) {
		return false
	}
	for role, n := range want {
		if groups[role].count != n {
			return false
		}
	}
	return true
}

// summary is "role +n, …", sorted, each role cut at its colon.
func summary(groups map[string]goroutineGroup) string {
	var parts []string
	for _, role := range slices.Sorted(maps.Keys(groups)) {
		short, _, _ := strings.Cut(role, ":")
		parts = append(parts, fmt.Sprintf("%s %+d", short, groups[role].count))
	}
	return strings.Join(parts, ", ")
}

// syncWatcherExited reports whether Run's short-lived sync watcher, which exits once
// it has announced the first sync, is gone: counting goroutines before that would
// count one on its way out.
func syncWatcherExited() bool {
	_, ok := libraryGoroutines()["Run's sync watcher: waits for the first list"]
	return !ok
}

// factoryStartRecorded: nothing happened before Start, and the Secrets informer
// requested after Start listed only at the second Start.
func factoryStartRecorded(r recorded) Check {
	early := r.before("factory.Start(ctx), then").library()
	secrets := r.of(trace.ListStarted).from("secrets")
	late := r.after("factory.Start(ctx) again").of(trace.ListStarted).from("secrets")
	return check("no event before Start; the Secrets informer listed once, after the second Start",
		len(early) == 0 && len(secrets) == 1 && len(late) == 1, "%d events before Start; Secrets lists %d, after the second Start %d",
		len(early), len(secrets), len(late))
}
