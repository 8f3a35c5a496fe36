package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
	"github.com/kubeinternals/informers/workqueue"
)

// conflictRetry: a PUT from the cache's resourceVersion after another writer changed
// the object gets 409. Retrying in place re-reads the server; returning the key to
// the queue re-reads the cache, which can still be behind.
func conflictRetry() Scenario {
	return Scenario{
		Name:     "conflict-retry",
		Question: "A write conflict (409): retry in place (RetryOnConflict-style) or return the key to the queue?",
		Why: "A PUT carries the resourceVersion it was read at; if someone wrote since, the server answers 409 Conflict instead of overwriting their change. " +
			"Retrying in place re-reads the object from the server, so the next PUT carries the current resourceVersion and succeeds at once — at the price of a GET and of holding the worker; " +
			"returning the key to the queue (AddRateLimited) frees the worker and backs off, but the next sync reads the informer's cache, which succeeds only once the watch has delivered the other writer's change.",
		Read: []string{
			"docs/faq.md #12 (stale cache reads after writes) and docs/05-workqueue.md (rate limiting)",
			"examples/foo-controller/controller/deployments.go: Controller.putDeployment (a PUT with the resourceVersion it read)",
			"workqueue/rate_limiting_queue.go: RateLimitingQueue.AddRateLimited",
		},
		Run:      runConflictRetry,
		Recorded: conflictRetryRecorded,
	}
}

// runConflictRetry produces one 409 per strategy with a competing write at a chosen
// moment, and measures how each strategy gets past it.
func runConflictRetry(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "conflict-retry")
	if err != nil {
		return nil, err
	}
	keyA, keyB := ns+"/in-place", ns+"/requeue"
	for _, name := range []string{"in-place", "requeue"} {
		if err := create(ctx, core, ns, "configmaps", configMap(ns, name, "n", "0")); err != nil {
			return nil, err
		}
	}
	r.Do("POST ConfigMaps in-place and requeue into %s", ns)

	o, err := newObserved[*corev1.ConfigMap](lab, lab.Watched, configMaps(ns), informer.FactoryOptions{})
	if err != nil {
		return nil, err
	}
	defer o.stop()
	f, tracer, rec, inf := o.factory, o.tracer, o.rec, o.SharedIndexInformer
	// The lagging watch, made deterministic: the competitor's version of "requeue"
	// waits at the informer's door (its transform, which runs before the object is
	// queued for the cache) until the gate opens.
	gate := make(chan struct{})
	var openOnce sync.Once
	open := func() { openOnce.Do(func() { close(gate) }) }
	defer open() // runs before f.Shutdown: a held transform would stop the informer from stopping
	if err := inf.SetTransform(func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm.Name == "requeue" && cm.Data["competitor"] != "" && cm.Data["controller"] == "" {
			<-gate
		}
		return cm, nil
	}); err != nil {
		return nil, err
	}
	logged, reqs := withRequestLog(lab.Direct)
	ctlCore, _, err := kube.NewRESTClient(logged, corev1.SchemeGroupVersion, nil, corev1.AddToScheme)
	if err != nil {
		return nil, err
	}
	c := &conflictCtl{inf: inf, core: ctlCore, tracer: tracer, inPlace: keyA,
		queue: workqueue.NewRateLimitingQueue(workqueue.RateLimitingOptions[string]{Options: workqueue.Options{Name: "conflicts", Tracer: tracer}}),
		read:  make(chan string), proceed: make(chan struct{}),
		attempts: map[string][]attempt{}, held: map[string]bool{},
		afterConflict: func(key string, n int) {
			if key == keyB && n == 2 {
				open() // the watch catches up after the second stale retry
			}
		}}
	wctx, stopWorker := context.WithCancel(ctx)
	var wg sync.WaitGroup
	// Goroutine owned by this scenario: the worker; it exits when the queue shuts down
	// (or wctx ends while it is held), and the scenario waits for it on every path out.
	wg.Go(func() { c.worker(wctx) })
	defer func() {
		stopWorker()
		c.queue.ShutDown()
		wg.Wait()
	}()
	f.Start(ctx)
	if err := informer.WaitForCacheSync(ctx, inf); err != nil {
		return nil, err
	}
	r.Do("start a ConfigMap informer and a controller whose worker sets data controller=done, reading the object from the cache and PUTting it with that resourceVersion; " +
		"on a 409 it retries in place for in-place, and returns the key to the queue (AddRateLimited, the default controller rate limiter) for requeue")

	// compete holds key's first sync after its cache read, has the competitor write
	// once, then lets the sync PUT.
	compete := func(key string) (cachedRV, serverRV string, err error) {
		c.queue.Add(key)
		select {
		case cachedRV = <-c.read:
		case <-ctx.Done():
			return "", "", ctx.Err()
		}
		_, name, _ := strings.Cut(key, "/")
		cm := &corev1.ConfigMap{}
		if err := core.Get().Namespace(ns).Resource("configmaps").Name(name).Do(ctx).Into(cm); err != nil {
			return "", "", err
		}
		cm.Data["competitor"] = "was here"
		if err := updateConfigMap(ctx, core, cm); err != nil {
			return "", "", err
		}
		select {
		case c.proceed <- struct{}{}:
		case <-ctx.Done():
			return "", "", ctx.Err()
		}
		return cachedRV, cm.ResourceVersion, nil
	}
	done := func(key string) func() bool {
		return func() bool { _, ok := succeeded(c.of(key)); return ok }
	}

	startA := time.Now()
	cachedA, serverA, err := compete(keyA)
	if err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "in-place to succeed", done(keyA)); err != nil {
		return nil, err
	}
	r.Do("in-place: Add its key; when the worker has read rv %s from the cache, a competitor PUTs data competitor=\"was here\" (rv %s), then the worker PUTs; "+
		"on the 409 it re-GETs from the server and PUTs again, 10ms apart (client-go's RetryOnConflict with DefaultRetry)", cachedA, serverA)
	startB := time.Now()
	cachedB, serverB, err := compete(keyB)
	if err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "requeue to succeed", done(keyB)); err != nil {
		return nil, err
	}
	endB := time.Now()
	r.Do("requeue: the same, and the competitor's version (rv %s) is held out of the informer's cache (its transform waits) until the worker's second 409 — "+
		"a watch that lags the retries, made deterministic", serverB)

	attemptsA, attemptsB := c.of(keyA), c.of(keyB)
	okA, _ := succeeded(attemptsA)
	okB, _ := succeeded(attemptsB)
	latA, latB := okA.End.Sub(attemptsA[0].Start), okB.End.Sub(attemptsB[0].Start)
	reqsA := requestsBetween(reqs, startA, startB, "/configmaps/in-place")
	reqsB := requestsBetween(reqs, startB, endB.Add(time.Second), "/configmaps/requeue")
	final := map[string]*corev1.ConfigMap{}
	for _, name := range []string{"in-place", "requeue"} {
		cm := &corev1.ConfigMap{}
		if err := core.Get().Namespace(ns).Resource("configmaps").Name(name).Do(ctx).Into(cm); err != nil {
			return nil, err
		}
		final[name] = cm
	}
	kept := func(name string) bool {
		return final[name].Data["competitor"] == "was here" && final[name].Data["controller"] == "done"
	}
	events := rec.Events()
	r.See("requeue, its workqueue and syncs:")
	r.Timeline(trace.Filter(events, func(e trace.Event) bool {
		return !e.Time.Before(startB) && e.Key == keyB && (e.Stage == trace.Workqueue || e.Kind == trace.Reconciled)
	}))
	limited := trace.Filter(events, func(e trace.Event) bool { return e.Kind == trace.RateLimited && e.Key == keyB })
	var delays []string
	doubling := len(limited) > 0
	for i, e := range limited {
		delays = append(delays, e.Duration.String())
		doubling = doubling && e.Duration == 5*time.Millisecond<<i
	}

	staleA := attemptsA[0].RV == cachedA && attemptsA[0].Code == 409
	r.See("in-place: %s — %d requests (%s), %d conflict, success %s after the first PUT", describe(attemptsA), len(reqsA), methods(reqsA), conflicts(attemptsA), latA.Round(100*time.Microsecond))
	r.See("requeue:  %s — %d requests (%s), %d conflicts, success %s after the first PUT; retries after %s",
		describe(attemptsB), len(reqsB), methods(reqsB), conflicts(attemptsB), latB.Round(100*time.Microsecond), strings.Join(delays, ", "))

	r.Check("in-place: the PUT from the cache's rv, made after the competitor's write, got 409", staleA,
		"PUT rv=%s while the server had rv=%s → %d", attemptsA[0].RV, serverA, attemptsA[0].Code)
	r.Check("in-place: one re-GET gave the server's rv and the next PUT succeeded", conflicts(attemptsA) == 1 && len(attemptsA) == 3 && attemptsA[1].Method == "GET" && attemptsA[1].RV == serverA && okA.RV == serverA,
		"%s", describe(attemptsA))
	r.Check("requeue: while the cache lagged, every retry read it and PUT the stale rv again: 409 each time",
		conflicts(attemptsB) >= 2 && allStale(attemptsB, cachedB), "%d PUTs with rv=%s (the server had rv=%s), all 409", conflicts(attemptsB), cachedB, serverB)
	r.Check("requeue: once the cache had the competitor's version, the retry PUT it and succeeded", okB.RV == serverB, "succeeded with rv=%s", okB.RV)
	r.Check("requeue: the retries were paced by the rate limiter, 5ms doubling", doubling, "delays %s", strings.Join(delays, ", "))
	r.Check("both: the competitor's change survived (the 409 is what protected it)", kept("in-place") && kept("requeue"),
		"in-place: competitor=%q controller=%q; requeue: competitor=%q controller=%q",
		final["in-place"].Data["competitor"], final["in-place"].Data["controller"], final["requeue"].Data["competitor"], final["requeue"].Data["controller"])
	r.Answer = fmt.Sprintf("both keep the other writer's change; retrying in place re-read the server and its first retry succeeded (%d conflict, %d requests, %s); "+
		"returning the key to the queue re-read the informer's cache, which lagged, so it conflicted until the cache caught up (%d conflicts, %d requests, %s, retries after %s)",
		conflicts(attemptsA), len(reqsA), latA.Round(100*time.Microsecond), conflicts(attemptsB), len(reqsB), latB.Round(100*time.Microsecond), strings.Join(delays, ", "))
	return r, nil
}

// allStale reports whether every 409 PUT carried rv.
func allStale(as []attempt, rv string) bool {
	for _, a := range as {
		if a.Code == 409 && a.RV != rv {
			return false
		}
	}
	return true
}

// requestsBetween returns the logged requests in [from, to) whose path ends with
// suffix.
func requestsBetween(log *requestLog, from, to time.Time, suffix string) []request {
	var out []request
	for _, r := range log.matching("", suffix) {
		if !r.At.Before(from) && r.At.Before(to) {
			out = append(out, r)
		}
	}
	return out
}

// conflictRetryRecorded: the requeued key's retries were rate-limited, 5ms then
// 10ms; the key retried in place never went back to the queue.
func conflictRetryRecorded(r recorded) Check {
	requeue := r.of(trace.RateLimited).about("/requeue")
	inPlace := r.of(trace.RateLimited).about("/in-place")
	return check("requeue: the retries were held back 5ms, then 10ms; in-place: never requeued",
		durations(requeue) == "5ms, 10ms" && len(inPlace) == 0, "requeue: %s; in-place: %d", durations(requeue), len(inPlace))
}
