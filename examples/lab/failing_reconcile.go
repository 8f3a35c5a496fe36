package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
	"github.com/kubeinternals/informers/workqueue"
)

// failingReconcile: a sync that fails is retried after 5ms, 10ms, 20ms, … (the default
// controller rate limiter); Forget after a success resets the count, and without it the
// next failure continues the backoff.
func failingReconcile() Scenario {
	return Scenario{
		Name:     "failing-reconcile",
		Question: "A reconcile keeps failing: what retry delays does the default rate limiter produce, and what does Forget do?",
		Why: "DefaultControllerRateLimiter gives each key the larger of an exponential backoff — 5ms·2ⁿ for its n-th failure since the last Forget, up to 1000s — and a token bucket shared by all keys (10 per second, burst 100), so the failures of one key are paced by the exponential alone. " +
			"Forget clears the key's failure count; a worker that skips it after a success leaves the count where it was, and the next, unrelated failure waits as if the old ones had just happened — with enough history, minutes.",
		Read: []string{
			"docs/05-workqueue.md (rate limiting: AddRateLimited, Forget, NumRequeues)",
			"workqueue/rate_limiters.go: DefaultControllerRateLimiter, ItemExponentialFailureRateLimiter.When",
			"workqueue/rate_limiting_queue.go: RateLimitingQueue.AddRateLimited, RateLimitingQueue.Forget",
		},
		Run:      runFailingReconcile,
		Recorded: failingReconcileRecorded,
	}
}

// errInjected is the failure the scenario's sync returns while a key has failures left.
var errInjected = errors.New("injected failure")

// flakyCtl is the scenario's controller: its sync fails while the key has failures
// left, then succeeds; after a success it calls Forget only for the keys in forget.
type flakyCtl struct {
	queue  *workqueue.RateLimitingQueue[string]
	tracer *trace.Tracer
	forget map[string]bool // read-only after construction

	mu        sync.Mutex
	failLeft  map[string]int // guarded by mu
	successes map[string]int // guarded by mu
}

// worker runs syncs until the queue shuts down.
func (c *flakyCtl) worker() {
	for {
		key, shutdown := c.queue.Get()
		if shutdown {
			return
		}
		start := time.Now()
		c.mu.Lock()
		var err error
		if c.failLeft[key] > 0 {
			c.failLeft[key]--
			err = errInjected
		}
		c.mu.Unlock()
		c.tracer.Reconciled("flaky", key, time.Since(start), err)
		switch {
		case err != nil:
			c.queue.AddRateLimited(key)
		case c.forget[key]:
			c.queue.Forget(key)
		}
		if err == nil {
			// Counted after Forget, so that a reader who sees the success also sees its
			// effect on NumRequeues.
			c.mu.Lock()
			c.successes[key]++
			c.mu.Unlock()
		}
		c.queue.Done(key)
	}
}

// fail makes key's next n syncs fail.
func (c *flakyCtl) fail(key string, n int) {
	c.mu.Lock()
	c.failLeft[key] = n
	c.mu.Unlock()
}

// succeeded reports whether key has had n successes.
func (c *flakyCtl) succeeded(key string, n int) func() bool {
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.successes[key] >= n
	}
}

// retry is one rate-limited retry: the delay AddRateLimited asked for, and the time
// from then until a worker got the key.
type retry struct {
	delay, waited time.Duration
	requeues      int
}

// retries pairs each RateLimited event of key in events with the next Got of key.
func retries(events []trace.Event, key string) []retry {
	var out []retry
	for i, e := range events {
		if e.Kind != trace.RateLimited || e.Key != key {
			continue
		}
		rt := retry{delay: e.Duration, requeues: e.Requeues, waited: -1}
		for _, g := range events[i+1:] {
			if g.Kind == trace.Got && g.Key == key {
				rt.waited = g.Time.Sub(e.Time)
				break
			}
		}
		out = append(out, rt)
	}
	return out
}

// delaysOf lists the retries' delays: "5ms, 10ms".
func delaysOf(rs []retry) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.delay.String())
	}
	return strings.Join(s, ", ")
}

// waitsOf lists the retries' measured waits: "5.1ms, 10.2ms".
func waitsOf(rs []retry) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.waited.Round(100*time.Microsecond).String())
	}
	return strings.Join(s, ", ")
}

// doublingFrom reports whether the delays are from, 2·from, 4·from, … and each wait
// was at least its delay (a timer never fires early).
func doublingFrom(rs []retry, from time.Duration) bool {
	for i, r := range rs {
		if r.delay != from<<i || r.waited < r.delay {
			return false
		}
	}
	return len(rs) > 0
}

// runFailingReconcile makes a key fail six times, then once more after Forget, and a
// second key fail without Forget, and reads the delays from the trace.
func runFailingReconcile(ctx context.Context, lab *Lab) (*Report, error) {
	const failures = 6
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "failing-reconcile")
	if err != nil {
		return nil, err
	}
	o, err := newObserved[*corev1.ConfigMap](lab, lab.Watched, configMaps(ns), informer.FactoryOptions{})
	if err != nil {
		return nil, err
	}
	defer o.stop()
	f, tracer, rec, inf := o.factory, o.tracer, o.rec, o.SharedIndexInformer
	flaky, sticky := ns+"/flaky", ns+"/no-forget"
	c := &flakyCtl{tracer: tracer, forget: map[string]bool{flaky: true},
		queue:    workqueue.NewRateLimitingQueue(workqueue.RateLimitingOptions[string]{Options: workqueue.Options{Name: "flaky", Tracer: tracer}}),
		failLeft: map[string]int{}, successes: map[string]int{}}
	enqueue := func(cm *corev1.ConfigMap) { c.queue.Add(cm.Namespace + "/" + cm.Name) }
	reg, err := inf.AddEventHandlerWithOptions(informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(cm *corev1.ConfigMap, _ bool) { enqueue(cm) },
		UpdateFunc: func(_, cm *corev1.ConfigMap) { enqueue(cm) },
	}, informer.HandlerOptions{Name: "enqueue"})
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	// Goroutine owned by this scenario: the worker; it exits when the queue shuts down,
	// and the scenario waits for it on every path out.
	wg.Go(c.worker)
	defer func() {
		c.queue.ShutDown()
		wg.Wait()
	}()
	f.Start(ctx)
	if err := informer.WaitForCacheSync(ctx, reg); err != nil {
		return nil, err
	}
	r.Do("start a ConfigMap informer on %s whose handler Adds ns/name on add and update, and a worker whose sync fails while the key has failures left; "+
		"on failure AddRateLimited (workqueue.DefaultControllerRateLimiter), on success Forget — except for no-forget", ns)

	// 1. Six failures, then a success and Forget.
	c.fail(flaky, failures)
	if err := create(ctx, core, ns, "configmaps", configMap(ns, "flaky", "v", "1")); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "flaky to succeed", c.succeeded(flaky, 1)); err != nil {
		return nil, err
	}
	afterForget := c.queue.NumRequeues(flaky)
	mark := len(rec.Events())
	r.Do("POST ConfigMap flaky with its sync set to fail %d times, and wait for its success", failures)

	// 2. One more failure after the Forget.
	c.fail(flaky, 1)
	if err := updateConfigMap(ctx, core, configMap(ns, "flaky", "v", "2")); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "flaky to succeed again", c.succeeded(flaky, 2)); err != nil {
		return nil, err
	}
	r.Do("make flaky's next sync fail once, PUT it, and wait for its success")

	// 3. The same without Forget.
	c.fail(sticky, 3)
	if err := create(ctx, core, ns, "configmaps", configMap(ns, "no-forget", "v", "1")); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "no-forget to succeed", c.succeeded(sticky, 1)); err != nil {
		return nil, err
	}
	withoutForget := c.queue.NumRequeues(sticky)
	c.fail(sticky, 1)
	if err := updateConfigMap(ctx, core, configMap(ns, "no-forget", "v", "2")); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "no-forget to succeed again", c.succeeded(sticky, 2)); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMap no-forget (fails 3 times; its success is not followed by Forget), then make it fail once more, PUT it, and wait for its success")

	events := rec.Events()
	first := retries(events[:mark], flaky)
	again := retries(events[mark:], flaky)
	stickyRetries := retries(events, sticky)
	r.See("flaky's first %d failures, from the trace (the wait is from AddRateLimited to the worker's Get):", failures)
	r.Timeline(trace.Filter(events[:mark], func(e trace.Event) bool {
		return e.Key == flaky && (e.Kind == trace.RateLimited || e.Kind == trace.Got || e.Kind == trace.Forgot)
	}))
	r.See("flaky: delays %s; measured waits %s; NumRequeues after its success and Forget: %d", delaysOf(first), waitsOf(first), afterForget)
	r.See("flaky, one more failure after the Forget: delay %s (requeue %s)", delaysOf(again), requeuesOf(again))
	r.See("no-forget: delays %s; NumRequeues after its success without Forget: %d; its next failure: delay %s (requeue %s)",
		delaysOf(stickyRetries[:min(3, len(stickyRetries))]), withoutForget, delaysOf(stickyRetries[min(3, len(stickyRetries)):]), requeuesOf(stickyRetries[min(3, len(stickyRetries)):]))

	r.Check("each failure was retried after 5ms, doubling, and no retry came early", len(first) == failures && doublingFrom(first, 5*time.Millisecond),
		"delays %s; waits %s", delaysOf(first), waitsOf(first))
	r.Check("Forget after the success reset the count", afterForget == 0, "NumRequeues %d", afterForget)
	r.Check("after Forget, a new failure starts again at 5ms", len(again) == 1 && again[0].delay == 5*time.Millisecond && again[0].requeues == 1,
		"delay %s, requeue %s", delaysOf(again), requeuesOf(again))
	r.Check("without Forget, the count survives the success", withoutForget == 3, "NumRequeues %d", withoutForget)
	r.Check("without Forget, the next failure continues the backoff", len(stickyRetries) == 4 && doublingFrom(stickyRetries, 5*time.Millisecond) && stickyRetries[3].requeues == 4,
		"delays %s", delaysOf(stickyRetries))
	next := "none"
	if len(stickyRetries) == 4 {
		next = stickyRetries[3].delay.String()
	}
	r.Answer = fmt.Sprintf("5ms doubling per failure (%s, measured %s); Forget resets the key (NumRequeues %d, the next failure waited %s again); "+
		"without Forget the count stays at %d after a success and the next failure waits %s",
		delaysOf(first), waitsOf(first), afterForget, delaysOf(again), withoutForget, next)
	return r, nil
}

// requeuesOf is the Requeues of the retries, "1" or "1, 2".
func requeuesOf(rs []retry) string {
	var s []string
	for _, r := range rs {
		s = append(s, fmt.Sprint(r.requeues))
	}
	return strings.Join(s, ", ")
}

// failingReconcileRecorded: six failures retried at 5ms doubling; after Forget the
// next failure starts at 5ms again, without Forget the backoff goes on.
func failingReconcileRecorded(r recorded) Check {
	flaky := r.of(trace.RateLimited).about("/flaky")
	sticky := r.of(trace.RateLimited).about("/no-forget")
	return check("flaky: 5ms doubling six times, then 5ms again after Forget; no-forget: the fourth failure waited 40ms",
		durations(flaky) == "5ms, 10ms, 20ms, 40ms, 80ms, 160ms, 5ms" && durations(sticky) == "5ms, 10ms, 20ms, 40ms",
		"flaky: %s; no-forget: %s", durations(flaky), durations(sticky))
}
