package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/pause"
	"github.com/kubeinternals/informers/trace"
)

// laggingAPIServer: an HA control plane's second apiserver lags (its connection to
// etcd frozen); the informer fails over to it, and later relists on it. Its cache never
// goes back in time: the re-watch from its resourceVersion stays silent, the relist
// asks for that resourceVersion (then ""), never "0" — unlike a LIST at "0", which the
// lagging apiserver answers at once with the older state.
func laggingAPIServer() Scenario {
	return Scenario{
		Name:     "lagging-apiserver",
		Question: "An HA control plane has two apiservers and my client fails over to one whose watch cache lags: can my informer's cache go back in time?",
		Why: "No. Each apiserver answers from its own watch cache, which follows etcd at its own pace, so after a failover the reflector may talk to one that has not yet seen what it has. " +
			"Its re-watch asks for the events after its last resourceVersion (W1, W6), and a lagging apiserver accepts that watch and simply sends nothing until its cache gets there: the informer sees no change for a while, never an older state. " +
			"Every relist asks for that resourceVersion too (\"at least this new\": S1, or L1 on the LIST path), and the lagging apiserver waits 3 s for its cache, then refuses with 504 \"Too large resource version\"; the reflector then asks for the most recent state (\"\", S3 or L3), which needs etcd's current revision, so it waits until the apiserver reaches etcd again and has caught up. " +
			"Only the very first LIST of the classic path asks for \"0\", \"any state you have\", which a lagging apiserver answers at once from its stale cache: harmless for a fresh cache (the watch that follows catches it up), but a relist at \"0\" would replace a newer cache with that older state — deleted objects back, new ones gone — which is what client-go did until kubernetes/kubernetes#83520 (2019) made relists ask for the last resourceVersion.",
		Read: []string{
			"docs/03-reflector.md (resource versions; W1, W6, S1, S3, L1, L3) and docs/faq.md #25",
			"reflector/list.go: Reflector.relistResourceVersion (Transition L1); reflector/watchlist.go: Reflector.rewatchResourceVersion, Reflector.retryWatchList (Transitions S1, S3); reflector/watch.go: Reflector.watch (Transitions W1, W6, W8)",
			"internal/testrig/testenv/second_apiserver.go: SecondAPIServer, and its integration test for every answer of a lagging apiserver",
		},
		Fault:    "starts a second kube-apiserver on the same etcd, freezes its connection to etcd, fails the informer over to it and back, and compacts etcd",
		Run:      runLaggingAPIServer,
		Recorded: laggingAPIServerRecorded,
	}
}

// laggingQuiet is how long the scenario watches the informer on the lagging
// apiserver, and how long it leaves the relist waiting there, before it thaws it.
const laggingQuiet = 3 * time.Second

func runLaggingAPIServer(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "lagging")
	if err != nil {
		return nil, err
	}
	// Why PodTemplates, cached on B only: the lab's apiserver A serves them from etcd,
	// so that a re-watch after a compaction gets 410 Gone (see compaction-410); B
	// needs a watch cache to lag.
	b, err := lab.StartSecondAPIServer(ctx, "--watch-cache-sizes=podtemplates#100")
	if err != nil {
		return nil, err
	}
	defer b.Stop()
	defer func() { _, _ = lab.FailBack() }() // the scenarios after this one watch A
	r.Do("start a second kube-apiserver, B, on the same etcd (its own port and watch cache), its etcd connection through a proxy that can freeze it")
	bCore, _, err := kube.NewRESTClient(b.Config, corev1.SchemeGroupVersion, nil, corev1.AddToScheme)
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"pt-0", "pt-1", "pt-2"} {
		if err := create(ctx, core, ns, "podtemplates", podTemplate(ns, name)); err != nil {
			return nil, err
		}
	}
	if err := await(ctx, awaitLong, "B's watch cache to hold pt-0…pt-2", func() bool {
		l, err := listAtZero(ctx, bCore, ns)
		return err == nil && len(l.Items) == 3
	}); err != nil {
		return nil, err
	}
	r.Do("POST pt-0, pt-1, pt-2 into %s on A, and wait until B's cache has them", ns)

	// The failover in the middle of a relist: the sink acts on the reflector's
	// goroutine when it reports the relist after a 410, before its backoff ends.
	var armed, switched atomic.Bool
	failOverOnGone := func(e trace.Event) {
		if armed.Load() && !switched.Load() && e.Kind == trace.Relist && strings.Contains(e.Reason, "410") {
			if _, err := lab.FailOver(b); err == nil {
				switched.Store(true)
			}
		}
	}
	calls := &callRecorder[*corev1.PodTemplate]{}
	inf, err := newObservedWith[*corev1.PodTemplate](lab, lab.Watched, labelled(ns, "podtemplates"), informer.FactoryOptions{}, failOverOnGone)
	if err != nil {
		return nil, err
	}
	defer inf.stop()
	if _, err := inf.AddEventHandlerWithOptions(calls.handler(), informer.HandlerOptions{Name: "recorder"}); err != nil {
		return nil, err
	}
	if err := inf.start(ctx); err != nil {
		return nil, err
	}
	r.Do("start a PodTemplate informer through the front proxy, on A, with a handler recording every call")

	b.EtcdLink.Freeze()
	if err := createAndAwait(ctx, core, inf, "podtemplates", podTemplate(ns, "pt-3")); err != nil {
		return nil, err
	}
	if err := deleteObject(ctx, core, "podtemplates", ns, "pt-0"); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "the informer to drop pt-0", func() bool { return !cached(inf.SharedIndexInformer, ns+"/pt-0")() }); err != nil {
		return nil, err
	}
	x := inf.LastSyncResourceVersion()
	r.Fault("freeze B's connection to etcd; POST pt-3 and DELETE pt-0 on A; the informer has both (resourceVersion %s)", x)

	stale, err := listAtZero(ctx, bCore, ns)
	if err != nil {
		return nil, err
	}
	staleNames := names(stale.Items)
	r.Do("LIST the PodTemplates at resourceVersion \"0\" on B directly, as a first LIST does")
	r.See("B's answer at \"0\": resourceVersion %s, %s — the informer is at %s with %s", stale.ResourceVersion, joinKeys(staleNames), x, joinKeys(cachedNames(inf)))

	// Part 1: the failover.
	mark := inf.mark()
	cut, err := lab.FailOver(b)
	if err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "the re-watch on B", func() bool { return len(ofKind(inf.since(mark), trace.WatchStarted, "")) > 0 }); err != nil {
		return nil, err
	}
	if err := create(ctx, core, ns, "podtemplates", podTemplate(ns, "pt-4")); err != nil {
		return nil, err
	}
	r.Fault("fail the informer over to B (%d connection cut); POST pt-4 on A; watch the informer for %s", cut, laggingQuiet)
	if !pause.For(ctx, laggingQuiet) {
		return nil, ctx.Err()
	}
	onB := inf.since(mark)
	rewatches := ofKind(onB, trace.WatchStarted, "")
	fetchesOnB := count(onB, func(e trace.Event) bool { return e.Kind == trace.ListStarted || e.Kind == trace.Relist })
	sawPT4 := cached(inf.SharedIndexInformer, ns+"/pt-4")()

	// Part 2: a relist that lands on B.
	if err := create(ctx, core, ns, "podtemplates", podTemplate(ns, "pt-5")); err != nil {
		return nil, err
	}
	rev, err := lab.CompactEtcd(ctx)
	if err != nil {
		return nil, err
	}
	mark2 := inf.mark()
	armed.Store(true)
	if _, err := lab.FailBack(); err != nil {
		return nil, err
	}
	r.Fault("POST pt-5 on A, compact etcd (revision %d); fail back to A, and fail over to B again the moment the reflector reports its relist after A's 410 Gone", rev)
	atNewest := func() bool {
		return slices.ContainsFunc(inf.since(mark2), func(e trace.Event) bool {
			return e.Kind == trace.ListStarted && e.ResourceVersion == "" && switched.Load()
		})
	}
	if err := await(ctx, time.Minute, "the relist on B to ask for the most recent state", atNewest); err != nil {
		return nil, err
	}
	if !pause.For(ctx, laggingQuiet) {
		return nil, ctx.Err()
	}
	waited := inf.since(mark2)
	thawed := time.Now()
	b.EtcdLink.Thaw()
	r.Fault("leave that relist waiting on B for %s, then thaw B's connection to etcd", laggingQuiet)
	for _, name := range []string{"pt-4", "pt-5"} {
		if err := await(ctx, awaitLong, "the informer to get "+name, cached(inf.SharedIndexInformer, ns+"/"+name)); err != nil {
			return nil, err
		}
	}
	caughtUp := time.Since(thawed)
	if err := createAndAwait(ctx, core, inf, "podtemplates", podTemplate(ns, "pt-6")); err != nil {
		return nil, err
	}
	r.Do("POST pt-6 on A and wait until the informer, still on B, has it")

	all := inf.since(mark)
	r.Timeline(trace.Filter(all, func(e trace.Event) bool {
		return e.Stage == trace.Reflector && (e.Kind != trace.WatchEvent || strings.HasPrefix(e.Key, ns+"/pt-"))
	}))
	fetches := ofKind(waited, trace.ListStarted, "")
	tooLarge := trace.Filter(waited, func(e trace.Event) bool {
		return e.Kind == trace.Relist && strings.Contains(e.Reason, "newer than the server has")
	})
	listedWhileFrozen := count(waited, func(e trace.Event) bool { return e.Kind == trace.Listed })
	askedX, tooLargeAfter := tooLargeWait(waited, x)
	backInTime := append(addsAfterDelete(calls.of("pt-0")), deletesOf(calls.of("pt-3"))...)
	keys := cachedNames(inf)
	r.See("the handler's calls for pt-0: %s; for pt-3: %s", callsText(calls.of("pt-0")), callsText(calls.of("pt-3")))
	r.See("after the thaw B caught up, and the informer with it, in %s; the informer holds %s", caughtUp.Round(time.Millisecond), joinKeys(keys))

	r.Check("B lagged: a LIST at \"0\" on B answered with an older state (pt-0 still there, pt-3 missing)",
		slices.Contains(staleNames, "pt-0") && !slices.Contains(staleNames, "pt-3"), "resourceVersion %s: %s", stale.ResourceVersion, joinKeys(staleNames))
	r.Check("failed over to B, the reflector re-watched from its last resourceVersion, and B kept that watch silent: no relist, and pt-4 (written on A) did not arrive",
		len(rewatches) > 0 && rewatches[0].ResourceVersion == x && fetchesOnB == 0 && !sawPT4,
		"re-watch from %s (last RV %s); %d (re)list(s) in %s; pt-4 cached: %v", firstRV(rewatches), x, fetchesOnB, laggingQuiet, sawPT4)
	r.Check("the relist that landed on B asked for the last resourceVersion, never \"0\"; B answered \"too large resource version\" after about 3 s, and the reflector asked for the most recent state (\"\") instead",
		switched.Load() && askedX && len(tooLarge) == 1 && len(fetches) == 2 && fetches[1].ResourceVersion == "",
		"fail-over at the 410: %v; fetches on B: %s; too large after %s", switched.Load(), listsOf(fetches), tooLargeAfter.Round(100*time.Millisecond))
	r.Check("while B lagged, the relist at \"\" got no answer, so nothing was replaced", listedWhileFrozen == 0,
		"%d list(s) completed in %s", listedWhileFrozen, laggingQuiet)
	r.Check("the cache never went back in time: pt-0 was not added again, pt-3 was not deleted", len(backInTime) == 0, "%s", callsText(backInTime))
	want := []string{"pt-1", "pt-2", "pt-3", "pt-4", "pt-5", "pt-6"}
	r.Check("after B caught up, the informer went on with the cluster's state", slices.Equal(keys, want), "%s", joinKeys(keys))
	r.Answer = fmt.Sprintf("no: on the lagging B the re-watch from rv=%s stayed silent for %s (no relist, no older state), the relist there asked for rv=%s, got \"too large\" after %s and then waited at \"\" until B caught up (%s after the thaw); a LIST at \"0\" on B would have installed rv=%s, with pt-0 back and pt-3 gone",
		x, laggingQuiet, x, tooLargeAfter.Round(100*time.Millisecond), caughtUp.Round(time.Millisecond), stale.ResourceVersion)
	return r, nil
}

// listAtZero lists the lab's PodTemplates of ns at resourceVersion "0".
func listAtZero(ctx context.Context, c rest.Interface, ns string) (*corev1.PodTemplateList, error) {
	l := &corev1.PodTemplateList{}
	err := c.Get().Namespace(ns).Resource("podtemplates").
		VersionedParams(&metav1.ListOptions{ResourceVersion: "0", LabelSelector: labLabel}, metav1.ParameterCodec).Do(ctx).Into(l)
	return l, err
}

// names are the objects' names, sorted.
func names(items []corev1.PodTemplate) []string {
	var out []string
	for _, pt := range items {
		out = append(out, pt.Name)
	}
	slices.Sort(out)
	return out
}

// cachedNames are the names in the informer's cache, sorted.
func cachedNames(inf *observed[*corev1.PodTemplate]) []string {
	var out []string
	for _, pt := range inf.Indexer().List() {
		out = append(out, pt.Name)
	}
	slices.Sort(out)
	return out
}

// tooLargeWait reports whether a fetch asked for rv, and how long after it the
// reflector reported the server's "too large resource version".
func tooLargeWait(events []trace.Event, rv string) (asked bool, after time.Duration) {
	var start time.Time
	for _, e := range events {
		switch {
		case e.Kind == trace.ListStarted && e.ResourceVersion == rv:
			asked, start = true, e.Time
		case asked && e.Kind == trace.Relist && strings.Contains(e.Reason, "newer than the server has"):
			return true, e.Time.Sub(start)
		}
	}
	return asked, 0
}

// addsAfterDelete are the add calls that came after a delete.
func addsAfterDelete(calls []handlerCall) []handlerCall {
	var out []handlerCall
	deleted := false
	for _, c := range calls {
		switch {
		case c.kind == "delete":
			deleted = true
		case deleted && c.kind == "add":
			out = append(out, c)
		}
	}
	return out
}

// deletesOf are the delete calls.
func deletesOf(calls []handlerCall) []handlerCall {
	return slices.DeleteFunc(slices.Clone(calls), func(c handlerCall) bool { return c.kind != "delete" })
}

// callsText is "OnAdd(…), OnDelete(…)", or "(none)".
func callsText(calls []handlerCall) string {
	if len(calls) == 0 {
		return "(none)"
	}
	var out []string
	for _, c := range calls {
		out = append(out, c.String())
	}
	return joinKeys(out)
}

// laggingAPIServerRecorded: no relist asked for "0", and the handler never saw the
// cache go back in time (pt-0 added again, pt-3 deleted).
func laggingAPIServerRecorded(r recorded) Check {
	zero := r.of(trace.ListStarted).where(func(e trace.Event) bool { return e.ResourceVersion == "0" })
	backInTime := r.after("freeze B").of(trace.HandlerCalled).where(func(e trace.Event) bool {
		return (e.Type == "add" && strings.HasSuffix(e.Key, "/pt-0")) || (e.Type == "delete" && strings.HasSuffix(e.Key, "/pt-3"))
	})
	tooLarge := r.of(trace.Relist).where(func(e trace.Event) bool { return strings.Contains(e.Reason, "newer than the server has") })
	return check("no list at \"0\"; B's \"too large\" answer made the reflector relist; the handler never saw pt-0 come back or pt-3 go",
		len(zero) == 0 && len(tooLarge) == 1 && len(backInTime) == 0, "lists at \"0\": %d; too-large relists: %d; calls back in time: %d",
		len(zero), len(tooLarge), len(backInTime))
}
