package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
)

// watchCut: a cut connection ends the watch, and the reflector watches again from
// its last resourceVersion without listing.
func watchCut() Scenario {
	return Scenario{
		Name:     "watch-cut",
		Question: "The watch connection is cut: does the informer relist?",
		Why: "No: a watch that ends without an error from the server (its timeout, or a connection closed or reset on the way) is resumed from the last resourceVersion the reflector saw, " +
			"and the server replays everything after it. Only a 410 Gone, an ERROR event or a watch that could not even start makes it fetch the whole state again " +
			"(a watch-list by default, as in client-go 1.37; a LIST in the classic pipeline).",
		Read: []string{
			"docs/03-reflector.md (transitions W1, W6)",
			"reflector/watch.go: Reflector.watch (Transition W6)",
		},
		Fault:    "cuts the informer's connections (a TCP proxy in front of kube-apiserver)",
		Run:      runWatchCut,
		Recorded: watchCutRecorded,
	}
}

func runWatchCut(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "watch-cut")
	if err != nil {
		return nil, err
	}
	if err := createConfigMaps(ctx, core, ns, "cm", 3); err != nil {
		return nil, err
	}
	r.Do("POST 3 ConfigMaps into %s, start a ConfigMap informer on it and wait for its cache", ns)
	inf, err := startObserved[*corev1.ConfigMap](ctx, lab, lab.Watched, configMaps(ns), informer.FactoryOptions{}, nil)
	if err != nil {
		return nil, err
	}
	defer inf.stop()
	// An event on this watch first, so that the cut does not end a watch that saw
	// nothing (a very short watch, which relists for a reason of its own).
	if err := createAndAwait(ctx, core, inf, "configmaps", configMap(ns, "before-cut")); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMap before-cut and wait until the informer has it")
	lastRV := inf.LastSyncResourceVersion()
	mark := inf.mark()

	cut, err := lab.Cut()
	if err != nil {
		return nil, err
	}
	r.Fault("cut every connection between the informer and kube-apiserver (%d open)", cut)
	late := configMap(ns, "after-cut")
	if err := create(ctx, core, ns, "configmaps", late); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMap after-cut (resourceVersion %s) and wait until the informer has it", late.ResourceVersion)
	if err := await(ctx, awaitLong, "the informer to see after-cut", cached(inf.SharedIndexInformer, ns+"/after-cut")); err != nil {
		return nil, err
	}

	all := inf.since(0)
	after := inf.since(mark)
	reflectorEvents := trace.Filter(after, func(e trace.Event) bool {
		return e.Stage == trace.Reflector && (e.Kind != trace.WatchEvent || e.Key == ns+"/after-cut")
	})
	r.Timeline(reflectorEvents)
	listed := trace.Filter(all, func(e trace.Event) bool { return e.Kind == trace.ListStarted })
	lists := len(listed)
	listsAfter := count(after, func(e trace.Event) bool { return e.Kind == trace.ListStarted || e.Kind == trace.Relist })
	rewatches := trace.Filter(after, func(e trace.Event) bool { return e.Kind == trace.WatchStarted })
	ended := trace.Filter(after, func(e trace.Event) bool { return e.Kind == trace.WatchEnded })
	added := count(after, func(e trace.Event) bool {
		return e.Kind == trace.WatchEvent && e.Type == "ADDED" && e.Key == ns+"/after-cut"
	})
	r.See("fetches of the full state in the whole run: %d (%s); lists or relists after the cut: %d", lists, listsOf(listed), listsAfter)

	r.Check("the cut ended the watch", len(ended) > 0, "%d watch ended", len(ended))
	r.Check("the reflector watched again from the last resourceVersion it had seen",
		len(rewatches) > 0 && rewatches[0].ResourceVersion == lastRV, "last RV %s, re-watch from %q", lastRV, firstRV(rewatches))
	r.Check("it did not relist", lists == 1 && listsAfter == 0, "%d (re)list in all, %d after the cut", lists, listsAfter)
	r.Check("the object created while the watch was down arrived as a watch event", added == 1, "%d ADDED for after-cut", added)
	r.Answer = fmt.Sprintf("no: after the cut it re-watched from resourceVersion %s (the last it had seen) and the object created meanwhile arrived as ADDED; the state was fetched once in the whole run, at the start (%s)",
		firstRV(rewatches), listsOf(listed))
	return r, nil
}

// firstRV is the resourceVersion of the first event, or "(none)".
func firstRV(events []trace.Event) string {
	if len(events) == 0 {
		return "(none)"
	}
	return events[0].ResourceVersion
}

// watchCutRecorded: the watch the cut ended was followed by a watch from the last
// resourceVersion seen, never by a relist, and the next object arrived as a watch
// event.
//
// Why it does not use the cut's mark: the scenario reports the cut once done, and the
// reflector may have re-watched before that.
func watchCutRecorded(r recorded) Check {
	cut := r.index(func(e trace.Event) bool { return e.Kind == trace.WatchEnded && e.Reason != "the context ended" })
	if cut < 0 {
		return check("the cut ended the watch", false, "no watch ended before the scenario stopped the informer")
	}
	seen := r[:cut].where(func(e trace.Event) bool { return e.Kind == trace.WatchEvent || e.Kind == trace.Bookmark })
	after := recorded(r[cut+1:])
	rewatch := after.of(trace.WatchStarted)
	fromLast := len(seen) > 0 && len(rewatch) > 0 && rewatch[0].ResourceVersion == seen[len(seen)-1].ResourceVersion
	added := after.of(trace.WatchEvent).about("/after-cut")
	return check("after the cut: a watch from the last resourceVersion seen, no relist, after-cut arrived as a watch event",
		fromLast && len(r.of(trace.ListStarted)) == 1 && len(added) == 1,
		"re-watched at %s; lists in all %d; after-cut events %d", rvsOf(rewatch), len(r.of(trace.ListStarted)), len(added))
}
