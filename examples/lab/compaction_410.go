package main

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
)

// compaction410: while the informer cannot reach the apiserver, an object is deleted
// and etcd compacts its history; the re-watch gets 410 Gone, the reflector relists
// (a watch-list, on the default pipeline), and the delete it never saw reaches the
// handler as a tombstone.
func compaction410() Scenario {
	return Scenario{
		Name:     "compaction-410",
		Question: "etcd compacts the history while the watch is down: what does the informer do, and how does a handler hear of an object deleted while it was away?",
		Why: "A watch resumes from the last resourceVersion it saw; once etcd has compacted past it, that history is gone and the server answers 410 Gone. " +
			"The reflector then fetches the whole state again — as client-go 1.37 does, with a watch-list from its last resourceVersion (resourceVersionMatch=NotOlderThan), the classic pipeline with a LIST — " +
			"and the queue hands it over as one replacement: the RealFIFO as one ReplacedAll, which the informer diffs against its cache (client-go: processReplacedAllInfo); a DeltaFIFO diffs it key by key in Replace. " +
			"Either way every cached key the new state lacks reaches the handlers as a delete carrying a DeletedFinalStateUnknown tombstone — the last state this client knew, since it never saw the real delete.",
		Read: []string{
			"docs/03-reflector.md (W8, S1, S2) and docs/02-deltafifo.md (RealFIFO, Replace); docs/faq.md #3 and #9",
			"reflector/watch.go: Reflector.watch (Transition W8); reflector/watchlist.go: Reflector.watchList (Transitions S1, S2)",
			"deltafifo/real_fifo.go: RealFIFO.Replace; informer/deltas.go: SharedIndexInformer.replaceAll; indexer/tombstone.go: DeletedFinalStateUnknown",
		},
		Fault:    "refuses the informer's connections and compacts etcd",
		Run:      runCompaction410,
		Recorded: compaction410Recorded,
	}
}

func runCompaction410(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "compaction")
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"pt-0", "pt-1", "pt-2"} {
		if err := create(ctx, core, ns, "podtemplates", podTemplate(ns, name)); err != nil {
			return nil, err
		}
	}
	r.Do("POST PodTemplates pt-0, pt-1, pt-2 into %s (served without a watch cache: --watch-cache-sizes=podtemplates#0)", ns)

	var mu sync.Mutex
	var deletes []string // "key (tombstone …)" or "key (watch event)"
	onDelete := informer.HandlerFuncs[*corev1.PodTemplate]{
		DeleteFunc: func(d informer.DeletedObject[*corev1.PodTemplate]) {
			mu.Lock()
			defer mu.Unlock()
			if d.FinalStateUnknown != nil {
				deletes = append(deletes, fmt.Sprintf("%s (tombstone, last known resourceVersion %s)", d.GetKey(), d.OptionalObj.ResourceVersion))
				return
			}
			deletes = append(deletes, d.GetKey()+" (watch event)")
		}}
	inf, err := startObserved(ctx, lab, lab.Watched, labelled(ns, "podtemplates"), informer.FactoryOptions{}, func(inf *informer.SharedIndexInformer[*corev1.PodTemplate]) error {
		_, err := inf.AddEventHandlerWithOptions(onDelete, informer.HandlerOptions{Name: "onDelete"})
		return err
	})
	if err != nil {
		return nil, err
	}
	defer inf.stop()
	// An event on this watch first, so that ending it is not a very short watch.
	if err := createAndAwait(ctx, core, inf, "podtemplates", podTemplate(ns, "pt-3")); err != nil {
		return nil, err
	}
	r.Do("start a PodTemplate informer with a delete handler; POST pt-3 and wait until it is cached")
	lastRV := inf.LastSyncResourceVersion()
	mark := inf.mark()

	accept, err := lab.Refuse()
	if err != nil {
		return nil, err
	}
	r.Fault("cut the informer's connections and refuse new ones (the apiserver is unreachable for it)")
	if err := deleteObject(ctx, core, "podtemplates", ns, "pt-1"); err != nil {
		return nil, err
	}
	r.Do("DELETE pt-1 while the informer is away")
	// Why one more write: compacting at revision R keeps R itself. A watch from the
	// informer's RV asks for the revisions after it; if the delete were the newest
	// revision, that watch would start exactly at R and be allowed — and then fail on
	// the delete's compacted previous value instead of getting a clean 410.
	if err := create(ctx, core, ns, "configmaps", configMap(ns, "later-write")); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMap later-write, so that etcd's newest revision is past the delete")
	rev, err := lab.CompactEtcd(ctx)
	if err != nil {
		return nil, err
	}
	r.Fault("compact etcd up to revision %d (past the informer's resourceVersion %s)", rev, lastRV)
	if err := accept(); err != nil {
		return nil, err
	}
	r.Do("accept the informer's connections again")
	gone := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(deletes) > 0
	}
	if err := await(ctx, awaitLong, "the handler to hear of pt-1's deletion", gone); err != nil {
		return nil, err
	}

	after := inf.since(mark)
	shown := trace.Filter(after, func(e trace.Event) bool {
		switch e.Kind {
		case trace.WatchStarted, trace.WatchEnded, trace.Relist, trace.ListStarted, trace.Listed, trace.Replaced:
			return true
		case trace.Backoff:
			return true
		case trace.Queued, trace.Applied, trace.HandlerCalled:
			return e.Key == ns+"/pt-1"
		}
		return false
	})
	r.Timeline(shown)
	relists := trace.Filter(after, func(e trace.Event) bool { return e.Kind == trace.Relist })
	replaced := trace.Filter(after, func(e trace.Event) bool { return e.Kind == trace.Replaced })
	relisted := trace.Filter(after, func(e trace.Event) bool { return e.Kind == trace.ListStarted })
	rewatchedFromLast := count(after, func(e trace.Event) bool { return e.Kind == trace.WatchStarted && e.ResourceVersion == lastRV })
	inferred := count(after, func(e trace.Event) bool {
		return e.Stage == trace.Informer && e.Kind == trace.Applied && e.Key == ns+"/pt-1" && e.Type == "delete"
	})
	mu.Lock()
	heard := append([]string(nil), deletes...)
	mu.Unlock()
	_, stillCached, _ := inf.Indexer().GetByKey(ns + "/pt-1")
	r.See("the delete handler heard: %s", joinKeys(heard))

	r.Check("the informer tried to resume from its last resourceVersion", rewatchedFromLast > 0, "%d watch(es) from rv=%s", rewatchedFromLast, lastRV)
	r.Check("the server answered 410 Gone and the reflector relisted", len(relists) > 0 && containsAll(relists[0].Reason, "410"), "relist reasons: %s", reasonsOf(relists))
	r.Check("the relist was a watch-list from the last resourceVersion, handed over as one ReplacedAll that the informer diffed against its cache",
		len(relisted) == 1 && relisted[0].Type == "watch-list" && relisted[0].ResourceVersion == lastRV && len(replaced) == 1 && inferred == 1,
		"relists: %s; %d Replace(s); the informer applied %d delete(s) of pt-1", listsOf(relisted), len(replaced), inferred)
	r.Check("the handler heard pt-1's deletion as a tombstone, not as a watch event", len(heard) == 1 && containsAll(heard[0], ns+"/pt-1", "tombstone"), "%s", joinKeys(heard))
	r.Check("pt-1 left the cache", !stillCached, "still cached: %v", stillCached)
	r.Answer = fmt.Sprintf("the re-watch from rv=%s got 410 Gone, the reflector relisted, and the handler got pt-1's delete as a DeletedFinalStateUnknown tombstone (%d relist reason(s): %s)",
		lastRV, len(relists), reasonsOf(relists))
	return r, nil
}

// compaction410Recorded: the re-watch got 410 Gone, the reflector relisted, and the
// handler heard pt-1's deletion from the relist.
func compaction410Recorded(r recorded) Check {
	relists := r.of(trace.Relist)
	gone := len(relists) > 0 && strings.Contains(relists[0].Reason, "410")
	deletes := r.of(trace.HandlerCalled).about("/pt-1").where(func(e trace.Event) bool { return e.Type == "delete" })
	inferred := r.of(trace.Applied).about("/pt-1").where(func(e trace.Event) bool {
		return e.Type == "delete" && strings.Contains(e.Detail, "tombstone")
	})
	return check("the re-watch got 410 Gone, the relist inferred pt-1's deletion and the handler heard it",
		gone && len(deletes) == 1 && len(inferred) == 1, "relists %d (%s); pt-1 deletes inferred %d, heard %d",
		len(relists), reasonsOf(relists), len(inferred), len(deletes))
}
