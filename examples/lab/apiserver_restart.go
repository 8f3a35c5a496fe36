package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
)

// apiserverRestart: kube-apiserver stops and starts again; the reflector keeps
// retrying, then resumes — by re-watching, or by relisting at its last
// resourceVersion, never further back.
func apiserverRestart() Scenario {
	return Scenario{
		Name:     "apiserver-restart",
		Question: "The apiserver restarts: what does the reflector do, and at which resourceVersion does it relist?",
		Why: "While the apiserver is down, each watch attempt is refused and the reflector backs off (800ms doubling, with jitter) and tries the same resourceVersion again; a watch that reaches the new apiserver before its watch cache is filled gets 429 and is retried the same way. " +
			"The new watch cache starts with one LIST from etcd, at etcd's current revision, and serves watches only from that revision on; which way the reflector resumes depends on whether its last resourceVersion is still in that window. " +
			"etcd counts one revision for every write to any resource (a busy cluster renews Leases every few seconds), so usually something was written after the last event or bookmark the reflector saw: its resourceVersion is older than the new cache, the watch gets 410 Gone, and the reflector fetches the whole state at its last resourceVersion (\"at least this new\"), never at \"0\", so its cache cannot go back in time — " +
			"by default, as in client-go 1.37, with a watch-list (resourceVersionMatch=NotOlderThan); the classic pipeline with a LIST at that resourceVersion. " +
			"If nothing at all was written since, the new cache can serve that resourceVersion and the reflector simply watches again, without relisting. " +
			"With RBAC on, as on kind, a retry that lands while the new apiserver is still loading its authorization caches (it serves before it is ready) is refused with 403 Forbidden instead; the reflector relists in the same way.",
		Read: []string{
			"docs/03-reflector.md (W2, W3, W8, L1) and docs/faq.md #3",
			"reflector/watch.go: Reflector.watch (Transitions W2, W8); reflector/watchlist.go: Reflector.rewatchResourceVersion (Transition S1); reflector/list.go: Reflector.relistResourceVersion (Transition L1)",
			"reflector/backoff.go: backoff.Next (800ms doubling to 30s, jitter)",
		},
		Fault:    "restarts kube-apiserver",
		Run:      runAPIServerRestart,
		Recorded: apiserverRestartRecorded,
	}
}

func runAPIServerRestart(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "restart")
	if err != nil {
		return nil, err
	}
	if err := createConfigMaps(ctx, core, ns, "cm", 3); err != nil {
		return nil, err
	}
	// Why Direct, not through the proxy: while the apiserver is down, the proxy would
	// accept a connection and then close it, which a client sees as EOF rather than
	// the "connection refused" of a real outage — and the reflector treats the two
	// differently (W2 retries the watch, W3 relists).
	inf, err := startObserved[*corev1.ConfigMap](ctx, lab, lab.Direct, configMaps(ns), informer.FactoryOptions{}, nil)
	if err != nil {
		return nil, err
	}
	defer inf.stop()
	if err := createAndAwait(ctx, core, inf, "configmaps", configMap(ns, "before-restart")); err != nil {
		return nil, err
	}
	r.Do("POST 3 ConfigMaps and before-restart into %s; a ConfigMap informer caches them", ns)
	mark := inf.mark()

	start := time.Now()
	// Why the fault is reported before it is done: its mark in the recording is where
	// the apiserver went away, not where it came back.
	r.Fault("stop kube-apiserver (SIGTERM, then kill after 3s) and start it again on the same etcd")
	if err := lab.RestartAPIServer(ctx); err != nil {
		return nil, err
	}
	down := time.Since(start)
	r.Do("wait for the new kube-apiserver's /readyz (%s after the stop began)", down.Round(time.Millisecond))
	late := configMap(ns, "after-restart")
	if err := create(ctx, core, ns, "configmaps", late); err != nil {
		return nil, err
	}
	r.Do("POST after-restart (resourceVersion %s) and wait until the informer has it", late.ResourceVersion)
	if err := await(ctx, time.Minute, "the informer to see after-restart", cached(inf.SharedIndexInformer, ns+"/after-restart")); err != nil {
		return nil, err
	}
	recovered := time.Since(start)

	after := inf.since(mark)
	// Why from the trace, not LastSyncResourceVersion before the restart: a bookmark
	// may move the reflector's resourceVersion on between that read and the restart.
	// The watch the restart ended says where the next one starts.
	lastRV := inf.LastSyncResourceVersion()
	if ended := trace.Filter(after, func(e trace.Event) bool { return e.Kind == trace.WatchEnded }); len(ended) > 0 {
		lastRV = ended[0].ResourceVersion
	}
	reflectorEvents := trace.Filter(after, func(e trace.Event) bool {
		return e.Stage == trace.Reflector && (e.Kind != trace.WatchEvent || e.Key == ns+"/after-restart")
	})
	r.Timeline(reflectorEvents)
	lists := trace.Filter(after, func(e trace.Event) bool { return e.Kind == trace.ListStarted })
	backoffs := count(after, func(e trace.Event) bool { return e.Kind == trace.Backoff })
	relists := trace.Filter(after, func(e trace.Event) bool { return e.Kind == trace.Relist })
	keys := inf.Indexer().ListKeys()
	slices.Sort(keys)
	want := []string{ns + "/after-restart", ns + "/before-restart", ns + "/cm-0", ns + "/cm-1", ns + "/cm-2"}
	r.See("back-offs while it was down: %d; relists: %d (%s); fetches of the full state after the restart: %d: %s", backoffs, len(relists), reasonsOf(relists), len(lists), listsOf(lists))
	r.See("the informer caught up %s after the restart began", recovered.Round(time.Millisecond))

	r.Check("the restart ended the watch", count(after, func(e trace.Event) bool { return e.Kind == trace.WatchEnded }) > 0, "watch ended events: %d",
		count(after, func(e trace.Event) bool { return e.Kind == trace.WatchEnded }))
	retried := retriedAfterRefusal(after, lastRV)
	r.Check("while the apiserver was unreachable, the reflector backed off and retried the watch at the same resourceVersion",
		retried, "a refused watch followed by a watch from rv=%s: %v", lastRV, retried)
	r.Check("every relist after the restart asked for the last resourceVersion, never \"0\" (which could go back in time)",
		allAt(lists, lastRV), "last RV %s; %s", lastRV, listsOf(lists))
	r.Check("the cache holds exactly the server's objects afterwards", slices.Equal(keys, want), "%s", joinKeys(keys))
	how := fmt.Sprintf("re-watched from rv=%s without listing", lastRV)
	if len(lists) > 0 {
		how = fmt.Sprintf("relisted (%s) after %s", listsOf(lists), reasonsOf(relists))
	}
	r.Answer = fmt.Sprintf("it backed off %d time(s) while the apiserver was down, then %s; the cache caught up %s after the restart began",
		backoffs, how, recovered.Round(time.Millisecond))
	return r, nil
}

// listsOf says how each (re)list fetched the state and at which resourceVersion,
// e.g. `watch-list at "75"` (the default) or `list at "75"` (the classic LIST).
func listsOf(lists []trace.Event) string {
	var out []string
	for _, e := range lists {
		out = append(out, fmt.Sprintf("%s at %q", e.Type, e.ResourceVersion))
	}
	if len(out) == 0 {
		return "(none)"
	}
	return joinKeys(out)
}

// allAt reports whether every (re)list asked for rv.
func allAt(lists []trace.Event, rv string) bool {
	for _, e := range lists {
		if e.ResourceVersion != rv {
			return false
		}
	}
	return true
}

// retriedAfterRefusal reports whether a backoff for a refused connection was
// followed by a watch from rv.
func retriedAfterRefusal(events []trace.Event, rv string) bool {
	refused := false
	for _, e := range events {
		switch {
		case e.Kind == trace.Backoff && strings.Contains(e.Reason, "connection refused"):
			refused = true
		case refused && e.Kind == trace.WatchStarted:
			return e.ResourceVersion == rv
		}
	}
	return false
}

// apiserverRestartRecorded: the reflector backed off while the apiserver was away,
// then re-watched or relisted from its last resourceVersion, never "0". Both ways
// happen on the same cluster (the Why says when), so the recording need not relist.
func apiserverRestartRecorded(r recorded) Check {
	away := r.after("stop kube-apiserver")
	relists := away.of(trace.ListStarted)
	fromLast := true
	for _, l := range relists {
		fromLast = fromLast && l.ResourceVersion != "0" && l.ResourceVersion != ""
	}
	return check("after the restart began, the watch ended, the reflector backed off, and every relist (if any) asked for a resourceVersion it had seen, never \"0\"",
		len(away.of(trace.WatchEnded)) > 0 && len(away.of(trace.Backoff)) > 0 && fromLast,
		"watch ended %d; backoffs %d; relists at %s", len(away.of(trace.WatchEnded)), len(away.of(trace.Backoff)), rvsOf(relists))
}
