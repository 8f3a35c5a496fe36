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
		Why: "The first list reaches every handler as adds with isInInitialList=true, and a handler's Registration counts as synced only once it has handled them all — so those adds necessarily arrive while WaitForCacheSync(registration) waits. " +
			"The informer itself is synced once the list is applied to the cache; each handler drains its own buffer on its own goroutine, so after WaitForCacheSync(informer) returns, adds may still be arriving, " +
			"and nothing orders them against the code that runs after the wait.",
		Read: []string{
			"docs/04-informer.md (per-handler sync) and docs/faq.md #21",
			"informer/wait.go: WaitForCacheSync; informer/registration.go: Registration.HasSynced",
			"informer/processor.go: sharedProcessor.distribute (never waits for a handler)",
		},
		Run:      runAddsBeforeSync,
		Recorded: addsBeforeSyncRecorded,
	}
}

func runAddsBeforeSync(ctx context.Context, lab *Lab) (*Report, error) {
	const n, handlerTakes = 300, time.Millisecond
	r := lab.newReport()
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
	handled := func() (initialAdds, liveAdds int) {
		mu.Lock()
		defer mu.Unlock()
		return initial, notInitial
	}
	var reg *informer.Registration[*corev1.ConfigMap]
	r.Do("start a ConfigMap informer on %s with one handler that takes %s per add; WaitForCacheSync(informer), then WaitForCacheSync(the handler's Registration)", ns, handlerTakes)
	inf, err := startObserved(ctx, lab, lab.Watched, configMaps(ns), informer.FactoryOptions{}, func(inf *informer.SharedIndexInformer[*corev1.ConfigMap]) (err error) {
		reg, err = inf.AddEventHandlerWithOptions(slowAdd, informer.HandlerOptions{Name: "slowAdd"})
		return err
	})
	if err != nil {
		return nil, err
	}
	defer inf.stop()
	// startObserved has just returned from WaitForCacheSync(informer).
	informerSynced := time.Now()
	atInformerSync, _ := handled()
	cachedThen := len(inf.Indexer().ListKeys())
	if err := informer.WaitForCacheSync(ctx, reg); err != nil {
		return nil, err
	}
	regSynced := time.Now()
	atRegSync, live := handled()

	events := inf.since(0)
	calls := trace.Filter(events, func(e trace.Event) bool { return e.Kind == trace.HandlerCalled })
	before := count(calls, func(e trace.Event) bool { return e.Time.Before(informerSynced) })
	r.Timeline(append(kinds(events, trace.ListStarted, trace.Listed), firstAndLast(calls)...))
	r.See("WaitForCacheSync(informer) returned at %s: %d objects cached, the handler done with %d adds (%d calls had begun)",
		trace.Offset(informerSynced.Sub(events[0].Time)), cachedThen, atInformerSync, before)
	r.See("WaitForCacheSync(Registration) returned %s later: the handler done with %d adds, all with isInInitialList=true (%d without)",
		regSynced.Sub(informerSynced).Round(time.Millisecond), atRegSync, live)

	r.Check("waiting on the informer returned once the cache was full", cachedThen == n, "%d of %d cached", cachedThen, n)
	r.Check("…while the handler was still working through the initial adds", atInformerSync < n, "%d of %d handled", atInformerSync, n)
	r.Check("waiting on the handler's Registration returned only after every initial add was handled: they all arrived while it waited",
		atRegSync == n, "%d of %d handled", atRegSync, n)
	r.Check("every initial add was marked isInInitialList", live == 0, "%d adds without it", live)
	r.Answer = fmt.Sprintf("\"synced\" means the initial list was delivered, so its adds come before the wait on a handler's Registration returns (%d of %d handled when it did); "+
		"waiting on the informer only means the cache is full: it returned with the handler at %d of %d, and the rest arrived %s later, in no order relative to the code after the wait",
		atRegSync, n, atInformerSync, n, regSynced.Sub(informerSynced).Round(time.Millisecond))
	return r, nil
}

// firstAndLast keeps the first and the last event (the whole slice if shorter).
func firstAndLast(events []trace.Event) []trace.Event {
	if len(events) <= 2 {
		return events
	}
	return []trace.Event{events[0], events[len(events)-1]}
}

// addsBeforeSyncRecorded: the cache was full before the handler had seen every
// initial add.
func addsBeforeSyncRecorded(r recorded) Check {
	listed, adds := r.of(trace.Listed), r.of(trace.HandlerCalled).where(func(e trace.Event) bool { return e.Type == "add" })
	applied := r.of(trace.Applied)
	lastApplied := r.index(func(e trace.Event) bool { return len(applied) > 0 && e == applied[len(applied)-1] })
	addsAfter := len(recorded(r[lastApplied+1:]).of(trace.HandlerCalled))
	return check("the initial list's objects all reached the indexer before the handler had been called for them all",
		len(listed) == 1 && len(adds) == listed[0].Items && lastApplied >= 0 && addsAfter > 0,
		"listed %d, handler adds %d, of them after the indexer's last write %d", itemsOf(listed), len(adds), addsAfter)
}
