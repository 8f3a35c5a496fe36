package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
)

// addsBeforeSync: the handler hears the initial list while WaitForCacheSync waits,
// and WaitForCacheSync returns while the handler still has adds to go.
func addsBeforeSync() Scenario {
	return Scenario{
		Name:     "adds-before-sync",
		Question: "Why do Add events arrive while WaitForCacheSync is still waiting, and is there any order between WaitForCacheSync returning and the handlers' events?",
		Why: "WaitForCacheSync waits for the informer's cache: it returns once the first list has been popped and applied to the indexer. " +
			"Handlers are fed from that same loop, each through its own buffer and goroutine, so they start hearing adds as soon as the first item is applied " +
			"and finish whenever they finish — the cache and the handlers are not synchronised. To wait for a handler, wait for its Registration.",
		Read: []string{
			"docs/04-informer.md (per-handler sync) and docs/faq.md #21",
			"informer/wait.go: WaitForCacheSync; informer/registration.go: Registration.HasSynced",
			"informer/processor.go: sharedProcessor.distribute (never waits for a handler)",
		},
		Run: runAddsBeforeSync,
	}
}

func runAddsBeforeSync(ctx context.Context, lab *Lab) (*Report, error) {
	const n, handlerTakes = 300, time.Millisecond
	r := &Report{}
	core, ns, err := lab.begin(ctx, "adds-before-sync")
	if err != nil {
		return nil, err
	}
	if err := createConfigMaps(ctx, core, ns, "cm", n); err != nil {
		return nil, err
	}
	r.Do("POST %d ConfigMaps into namespace %s", n, ns)

	var mu sync.Mutex
	var initial, notInitial int
	slowAdd := informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(_ *corev1.ConfigMap, isInInitialList bool) {
		time.Sleep(handlerTakes) // a handler doing a little work
		mu.Lock()
		defer mu.Unlock()
		if isInInitialList {
			initial++
		} else {
			notInitial++
		}
	}}
	var reg *informer.Registration[*corev1.ConfigMap]
	r.Do("start a ConfigMap informer on %s with one handler that takes %s per add, then WaitForCacheSync(informer)", ns, handlerTakes)
	inf, err := startObserved(ctx, lab, lab.Watched, configMaps(ns), informer.FactoryOptions{}, func(inf *informer.SharedIndexInformer[*corev1.ConfigMap]) (err error) {
		reg, err = inf.AddEventHandlerWithOptions(slowAdd, informer.HandlerOptions{Name: "slowAdd"})
		return err
	})
	if err != nil {
		return nil, err
	}
	defer inf.stop()
	returned := time.Now()
	cached := len(inf.Indexer().ListKeys())
	handlerSynced := reg.HasSynced()
	if err := informer.WaitForCacheSync(ctx, reg); err != nil {
		return nil, err
	}
	regSynced := time.Now()

	events := inf.since(0)
	calls := trace.Filter(events, func(e trace.Event) bool { return e.Kind == trace.HandlerCalled })
	before := count(calls, func(e trace.Event) bool { return e.Time.Before(returned) })
	after := len(calls) - before
	listed := kinds(events, trace.ListStarted, trace.Listed)
	mu.Lock()
	gotInitial, gotLive := initial, notInitial
	mu.Unlock()

	r.Timeline(append(listed, firstAndLast(calls)...))
	r.See("WaitForCacheSync(informer) returned at %s with %d objects in the cache", trace.Offset(returned.Sub(events[0].Time)), cached)
	r.See("handler calls before it returned: %d; after: %d; all %d with isInInitialList=true (%d without)", before, after, gotInitial, gotLive)
	r.See("the handler's Registration synced %s after the informer did", regSynced.Sub(returned).Round(time.Millisecond))

	r.Check("every object was in the cache when WaitForCacheSync returned", cached == n, "%d of %d", cached, n)
	r.Check("the handler heard adds while WaitForCacheSync was still waiting", before > 0, "%d calls before it returned", before)
	r.Check("adds still reached the handler after WaitForCacheSync returned", after > 0, "%d calls after", after)
	r.Check("the handler's Registration had not synced when the informer had", !handlerSynced, "Registration.HasSynced()=%v at that moment", handlerSynced)
	r.Check("every initial add was marked isInInitialList", gotInitial == n && gotLive == 0, "%d initial, %d not", gotInitial, gotLive)
	r.Answer = fmt.Sprintf("because handlers run beside the cache, not after it: %d of %d initial adds reached the handler before WaitForCacheSync returned and %d after; "+
		"only the handler's Registration (synced %s later) says it has seen them all", before, n, after, regSynced.Sub(returned).Round(time.Millisecond))
	return r, nil
}

// firstAndLast keeps the first and the last event (the whole slice if shorter).
func firstAndLast(events []trace.Event) []trace.Event {
	if len(events) <= 2 {
		return events
	}
	return []trace.Event{events[0], events[len(events)-1]}
}
