package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/trace"
)

// The watch-list-cut scenario's path: a proxy that closes every connection 3s after it
// opened and carries 250 KB a second. 1,500 ConfigMaps of 1,200 random bytes (base64)
// make a watch-list of about 2.2 MB — nine seconds of streaming, cut at three, after
// some 500 objects — while a page of 500, which the apiserver gzips, is about 0.5 MB:
// two seconds.
//
// Why random data: the apiserver gzips large responses; repeated bytes would shrink a
// page — and, where the apiserver compresses watch-lists, the stream — to nothing.
// Why not a faster path: every object a cut stream delivered is in the recording.
const (
	cutMaxAge    = 3 * time.Second
	cutRate      = 250 << 10
	cutObjects   = 1500
	cutDataBytes = 1200
)

// watchListCut: a load balancer cuts every stream after a fixed time, shorter than the
// watch-list takes; the reflector backs off between cut streams and, after the third,
// lists in pages.
func watchListCut() Scenario {
	return Scenario{
		Name:     "watch-list-cut",
		Question: "A proxy cuts every stream after a few seconds, and my watch-list takes longer: does the informer ever sync?",
		Why: "Yes, here — not with client-go. A watch-list stream that closes before its end bookmark holds no usable state, so it must start over (S4). client-go starts over at once, forever: each attempt makes the apiserver stream the whole state again, and none finishes. " +
			"This reflector backs off between cut streams (as after any failure) and, after the third cut in a row, falls back to a LIST for that cycle (S7), at resourceVersion \"\": the watch cache answers a LIST at \"0\" or at a specific resourceVersion in one response whatever the limit — as long as the stream that was cut — and only a consistent read comes in pages, each a short request that gets through. " +
			"The watch that follows is cut too, but a cut watch resumes from its last resourceVersion without a relist (W6), so the informer stays synced. The next relist tries a watch-list again.",
		Read: []string{
			"docs/03-reflector.md (transitions S4, S7, W6)",
			"reflector/watchlist.go: Reflector.watchList (Transitions S4, S7); reflector/list.go: Reflector.relistResourceVersion (RV \"\" once the watch cache's answer is marked unusable)",
			"internal/testrig/testenv/proxy.go: Proxy.Limit (the maximum connection age and the byte rate)",
		},
		Fault: fmt.Sprintf("puts a proxy between the informer and kube-apiserver that closes each connection %v after it opened and carries %d KB a second (one HTTP/1.1 connection per request)",
			cutMaxAge, cutRate>>10),
		Run:      runWatchListCut,
		Recorded: watchListCutRecorded,
	}
}

func runWatchListCut(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "watch-list-cut")
	if err != nil {
		return nil, err
	}
	if err := createIncompressibleConfigMaps(ctx, core, ns, cutObjects, cutDataBytes); err != nil {
		return nil, err
	}
	r.Do("POST %d ConfigMaps of %d random bytes each into %s", cutObjects, cutDataBytes, ns)
	cfg, stop, err := lab.LimitedPath(cutMaxAge, cutRate)
	if err != nil {
		return nil, err
	}
	defer stop()
	r.Fault("route a new informer through a proxy that closes every connection %v after it opened and carries %d KB/s", cutMaxAge, cutRate>>10)
	began := time.Now()
	inf, err := startObserved[*corev1.ConfigMap](ctx, lab, cfg, configMaps(ns), informer.FactoryOptions{}, nil)
	if err != nil {
		return nil, err
	}
	defer inf.stop()
	synced := time.Since(began)
	r.Do("start a ConfigMap informer with zero options (the watch-list of client-go 1.37) and wait for its cache: synced after %v", synced.Round(100*time.Millisecond))
	if err := createAndAwait(ctx, core, inf, "configmaps", configMap(ns, "after-sync")); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMap after-sync and wait until the informer has it")

	events := inf.since(0)
	r.Timeline(trace.Filter(events, func(e trace.Event) bool {
		return e.Stage == trace.Reflector && e.Kind != trace.WatchEvent
	}))
	cuts := trace.Filter(events, isWatchListCut)
	backoffs := trace.Filter(events, func(e trace.Event) bool {
		return e.Kind == trace.Backoff && e.Reason == "before the next watch-list"
	})
	lists := trace.Filter(events, func(e trace.Event) bool { return e.Kind == trace.ListStarted })
	listed := trace.Filter(events, func(e trace.Event) bool { return e.Kind == trace.Listed })
	r.See("watch-list streams cut before their end bookmark: %d; backoffs between them: %s; fetches of the full state: %s",
		len(cuts), durationsOf(backoffs), listsOf(lists))
	if len(listed) > 0 {
		r.See("the LIST that synced the cache: %d items at resourceVersion %s, paged: %v", listed[0].Items, listed[0].ResourceVersion, listed[0].Paged)
	}
	cache := len(inf.Indexer().ListKeys())

	r.Check(fmt.Sprintf("the watch-list was cut %d times in a row, with a backoff before each new attempt", reflector.WatchListCutsBeforeList),
		len(cuts) == reflector.WatchListCutsBeforeList && len(backoffs) == reflector.WatchListCutsBeforeList-1,
		"%d cut streams, %d backoffs (%s)", len(cuts), len(backoffs), durationsOf(backoffs))
	r.Check("then it listed at resourceVersion \"\", in pages, and the cache synced",
		len(lists) == reflector.WatchListCutsBeforeList+1 && lists[len(lists)-1].Type == "list" && lists[len(lists)-1].ResourceVersion == "" &&
			len(listed) == 1 && listed[0].Paged && listed[0].Items == cutObjects,
		"fetches: %s; listed: %d", listsOf(lists), len(listed))
	r.Check("the cache holds every ConfigMap and the one created after the sync", cache == cutObjects+1, "%d keys", cache)
	r.Answer = fmt.Sprintf("yes: the watch-list was cut %d times (backoffs %s between them), then one LIST at resourceVersion \"\" in pages filled the cache with %d ConfigMaps, %v after the start; client-go would still be starting the watch-list over",
		len(cuts), durationsOf(backoffs), cutObjects, synced.Round(100*time.Millisecond))
	return r, nil
}

// createIncompressibleConfigMaps creates n ConfigMaps cm-0 … cm-(n-1) in ns, each with
// its own size bytes of random data, base64-encoded.
func createIncompressibleConfigMaps(ctx context.Context, core rest.Interface, ns string, n, size int) error {
	return createConfigMapsOf(ctx, core, n, func(i int) *corev1.ConfigMap {
		blob := make([]byte, size*3/4)
		_, _ = rand.Read(blob)
		return configMap(ns, fmt.Sprintf("cm-%d", i), "blob", base64.StdEncoding.EncodeToString(blob))
	})
}

// isWatchListCut matches the trace event of a watch-list stream closed before its end
// bookmark (S4, S7).
func isWatchListCut(e trace.Event) bool {
	return e.Kind == trace.WatchEnded && strings.HasPrefix(e.Reason, "the watch-list stream closed before its initial events ended")
}

// durationsOf is the Durations of events, rounded, or "(none)".
func durationsOf(events []trace.Event) string {
	var out []string
	for _, e := range events {
		out = append(out, e.Duration.Round(10*time.Millisecond).String())
	}
	if len(out) == 0 {
		return "(none)"
	}
	return joinKeys(out)
}

// watchListCutRecorded: three cut watch-lists with backoffs between them, then a paged
// LIST at resourceVersion "".
func watchListCutRecorded(r recorded) Check {
	cuts := r.where(isWatchListCut)
	lists := r.of(trace.ListStarted)
	listed := r.of(trace.Listed)
	ok := len(cuts) == reflector.WatchListCutsBeforeList && len(lists) == reflector.WatchListCutsBeforeList+1 &&
		lists[len(lists)-1].Type == "list" && lists[len(lists)-1].ResourceVersion == "" && len(listed) == 1 && listed[0].Paged
	return check("the watch-list was cut three times, then a paged LIST at resourceVersion \"\" synced the cache", ok,
		"%d cut streams; fetches: %s; listed %d", len(cuts), listsOf(lists), len(listed))
}
