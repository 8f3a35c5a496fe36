package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/bytecount"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/shard"
	"github.com/kubeinternals/informers/trace"
)

// shardedInformers: two informers, each with one half of the uid hash space, on a
// kube-apiserver that shards, then on one that does not.
func shardedInformers() Scenario {
	return Scenario{
		Name:     "sharded-informers",
		Question: "Two informers each take half of a resource with a shard selector: what does each receive and cache, with the apiserver's ShardedListAndWatch on, and with it off?",
		Why: "A sharded informer sends its shard as ListOptions.ShardSelector — shardRange(object.metadata.uid, start, end) — on every LIST and WATCH. " +
			"With the feature gate ShardedListAndWatch on, kube-apiserver hashes each object's uid (FNV-1a, 64 bits) and sends only the objects whose hash falls in the range, and a LIST echoes the selector in metadata.shardInfo: each half receives only its own objects, about half of them. " +
			"With the gate off (Kubernetes 1.37's default) the apiserver drops the field without a word and sends everything. The informer notices — the LIST with limit=1 it sends before each watch-list comes back without shardInfo — warns once, and drops the objects outside its shard itself: the caches are the same halves, but each informer received and decoded the whole resource. " +
			"A uid never changes, so every event of an object goes to the one shard that holds it.",
		Read: []string{
			"docs/09-outgrowing-one-replica.md (the hash space, the gate and the silent fallback)",
			"listwatch/sharded.go: Sharded.List, Sharded.Watch (the LIST with limit=1 before a watch-list), Sharded.keep (the client-side filter)",
			"shard/shard.go: Split, Shard.ContainsObject",
		},
		Fault:    "starts a second kube-apiserver on the same etcd with the feature gate ShardedListAndWatch off",
		Run:      runShardedInformers,
		Recorded: shardedInformersRecorded,
	}
}

// shardedConfigMaps is how many ConfigMaps the scenario shards.
const shardedConfigMaps = 24

// The recording's process names: each informer's events are prefixed with its own
// ("on-0/configmaps"), so a replay draws five pipelines.
const (
	wholeProcess  = "whole"
	gateOnPrefix  = "on-"
	gateOffPrefix = "off-"
)

// shardInformer is one informer of the scenario: its factory on a config that counts
// the bytes of the response bodies it reads, its trace and its log.
type shardInformer struct {
	process string
	shard   shard.Shard // zero: the whole resource
	factory *informer.Factory
	inf     *informer.SharedIndexInformer[*corev1.ConfigMap]
	rec     *trace.Recorder
	logs    *lockedBuffer
	bytes   atomic.Int64
}

// startShardInformer starts a ConfigMap informer for ns on cfg, for s (or the whole
// resource when s is zero), and waits for its cache. The caller stops it.
func startShardInformer(ctx context.Context, lab *Lab, cfg *rest.Config, ns, process string, s shard.Shard) (*shardInformer, error) {
	si := &shardInformer{process: process, shard: s, logs: &lockedBuffer{}}
	counting := rest.CopyConfig(cfg)
	counting.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err == nil {
				resp.Body = &bytecount.Body{ReadCloser: resp.Body, N: &si.bytes}
			}
			return resp, err
		})
	})
	tracer, rec := lab.newRecorderAs(process)
	f, err := lab.factoryOn(counting, tracer, informer.FactoryOptions{Shard: s, Logger: lab.logTo(si.logs, slog.LevelInfo)})
	if err != nil {
		return nil, err
	}
	inf, err := informer.For[*corev1.ConfigMap](f, configMaps(ns))
	if err != nil {
		f.Shutdown()
		return nil, err
	}
	si.factory, si.inf, si.rec = f, inf, rec
	f.Start(ctx)
	if err := informer.WaitForCacheSync(ctx, inf); err != nil {
		f.Shutdown()
		return nil, fmt.Errorf("informer %s: %w", process, err)
	}
	return si, nil
}

func (si *shardInformer) stop() { si.factory.Shutdown() }

// names is the sorted names of the ConfigMaps in the cache.
func (si *shardInformer) names() []string {
	var out []string
	for _, cm := range si.inf.Indexer().List() {
		out = append(out, cm.Name)
	}
	slices.Sort(out)
	return out
}

// status is the informer's Sharding, or the zero status for the whole resource.
func (si *shardInformer) status() listwatch.ShardStatus {
	st, _ := si.inf.Sharding()
	return st
}

// eventsAbout counts the informer's reflector events (watch events and drops) about key.
func (si *shardInformer) eventsAbout(key string) (watched, dropped int) {
	for _, e := range si.rec.Events() {
		if e.Key != key {
			continue
		}
		switch e.Kind {
		case trace.WatchEvent:
			watched++
		case trace.ShardDropped:
			dropped++
		}
	}
	return watched, dropped
}

func runShardedInformers(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "sharded")
	if err != nil {
		return nil, err
	}
	if err := createConfigMaps(ctx, core, ns, "cm", shardedConfigMaps); err != nil {
		return nil, err
	}
	r.Do("POST %d ConfigMaps cm-0 … cm-%d into %s", shardedConfigMaps, shardedConfigMaps-1, ns)
	halves, err := shard.Split(shard.UID, 2)
	if err != nil {
		return nil, err
	}
	// Why the label: the namespace also holds kube-root-ca.crt, which
	// kube-controller-manager publishes into every namespace, and the informers, like
	// every informer of the lab, watch only the lab's labelled objects.
	var all corev1.ConfigMapList
	if err := core.Get().Namespace(ns).Resource("configmaps").Param("labelSelector", labLabel).Do(ctx).Into(&all); err != nil {
		return nil, err
	}
	// want[i] is what half i must hold: the ConfigMaps whose uid hashes into it.
	var want [2][]string
	for _, cm := range all.Items {
		for i, h := range halves {
			if h.ContainsObject(&cm) {
				want[i] = append(want[i], cm.Name)
			}
		}
	}
	for i := range want {
		slices.Sort(want[i])
	}
	r.See("by their uids' hashes, half 0 %s holds %d ConfigMaps (%s), half 1 %s holds %d (%s)",
		halves[0], len(want[0]), joinKeys(want[0]), halves[1], len(want[1]), joinKeys(want[1]))
	for _, cm := range all.Items[:min(3, len(all.Items))] {
		r.See("  e.g. %s: uid %s hashes to 0x%016x", cm.Name, cm.UID, shard.Hash(string(cm.UID)))
	}

	// Gate on: the apiserver the lab started, with ShardedListAndWatch.
	whole, err := startShardInformer(ctx, lab, lab.Watched, ns, wholeProcess, shard.Shard{})
	if err != nil {
		return nil, err
	}
	defer whole.stop()
	var on, off [2]*shardInformer
	for i, h := range halves {
		if on[i], err = startShardInformer(ctx, lab, lab.Watched, ns, fmt.Sprintf("%s%d", gateOnPrefix, i), h); err != nil {
			return nil, err
		}
		defer on[i].stop()
	}
	r.Do("start three ConfigMap informers on the lab's kube-apiserver (feature gate %s on): %q for the whole resource, %q and %q for the halves of shard.Split(shard.UID, 2); wait until each has synced",
		shard.FeatureGate, wholeProcess, on[0].process, on[1].process)
	// What each read to sync, before new's events add to some of them.
	wholeBytes := whole.bytes.Load()
	onBytes := [2]int64{on[0].bytes.Load(), on[1].bytes.Load()}

	// One more object, changed while the four watch.
	created := configMap(ns, "new", "v", "1")
	if err := create(ctx, core, ns, "configmaps", created); err != nil {
		return nil, err
	}
	owner := 0
	if !halves[0].ContainsObject(created) {
		owner = 1
	}
	key := ns + "/new"
	if err := await(ctx, awaitLong, "half "+fmt.Sprint(owner)+" to cache new", cached(on[owner].inf, key)); err != nil {
		return nil, err
	}
	created.Data["v"] = "2"
	if err := updateConfigMap(ctx, core, created); err != nil {
		return nil, err
	}
	if err := deleteObject(ctx, core, "configmaps", ns, "new"); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "the whole resource's informer to see new deleted", func() bool {
		w, _ := whole.eventsAbout(key)
		return !cached(whole.inf, key)() && w == 3
	}); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "half "+fmt.Sprint(owner)+" to see new deleted", func() bool {
		w, _ := on[owner].eventsAbout(key)
		return w == 3
	}); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMap new (uid %s hashes to 0x%016x: half %d), PUT it, DELETE it; wait until the whole resource's informer and half %d have seen all three",
		created.UID, shard.Hash(string(created.UID)), owner, owner)
	ownerWatched, _ := on[owner].eventsAbout(key)
	otherWatched, otherDropped := on[1-owner].eventsAbout(key)

	// Gate off: a second apiserver on the same etcd, the gate turned off again.
	second, err := lab.StartSecondAPIServer(ctx, "--feature-gates="+shard.FeatureGate+"=false")
	if err != nil {
		return nil, err
	}
	defer second.Stop()
	r.Fault("start a second kube-apiserver on the same etcd with --feature-gates=%s=false", shard.FeatureGate)
	for i, h := range halves {
		if off[i], err = startShardInformer(ctx, lab, second.Config, ns, fmt.Sprintf("%s%d", gateOffPrefix, i), h); err != nil {
			return nil, err
		}
		defer off[i].stop()
	}
	r.Do("start %q and %q, the same two halves, on the second kube-apiserver; wait until each has synced", off[0].process, off[1].process)

	offBytes := [2]int64{off[0].bytes.Load(), off[1].bytes.Load()}
	synced := map[*shardInformer]int64{whole: wholeBytes, on[0]: onBytes[0], on[1]: onBytes[1], off[0]: offBytes[0], off[1]: offBytes[1]}
	r.See("what each informer read to sync (response bodies, after gzip; the whole resource's and the gate-on halves' before new's events), and what it holds:")
	for _, si := range []*shardInformer{whole, on[0], on[1], off[0], off[1]} {
		what := "the whole resource"
		if !si.shard.IsZero() {
			what = si.status().String()
		}
		r.See("  %-6s %5d bytes (%.2f of the whole resource's), %2d cached: %s", si.process, synced[si],
			float64(synced[si])/float64(max(wholeBytes, 1)), len(si.names()), what)
	}
	for _, si := range off {
		for _, l := range si.logs.linesWith("client-side filtering") {
			r.See("%s logged: %s", si.process, withoutTime(l))
		}
	}
	r.See("new: %d watch events reached half %d; half %d got %d watch events and dropped %d", ownerWatched, owner, 1-owner, otherWatched, otherDropped)

	var onNames, offNames [2][]string
	for i := range halves {
		onNames[i], offNames[i] = on[i].names(), off[i].names()
	}
	union := slices.Concat(onNames[0], onNames[1])
	slices.Sort(union)
	r.Check("with the gate on, each half cached exactly the ConfigMaps whose uid hashes into it: disjoint, and together the whole resource",
		slices.Equal(onNames[0], want[0]) && slices.Equal(onNames[1], want[1]) && slices.Equal(union, whole.names()) && len(union) == shardedConfigMaps,
		"half 0: %d (want %d), half 1: %d (want %d), the whole resource's informer %d", len(onNames[0]), len(want[0]), len(onNames[1]), len(want[1]), len(whole.names()))
	onStatus := [2]listwatch.ShardStatus{on[0].status(), on[1].status()}
	r.Check("with the gate on, the apiserver filtered: both halves say server-side filtering, dropped nothing and warned nothing",
		onStatus[0].Filtering == listwatch.FilteringServer && onStatus[1].Filtering == listwatch.FilteringServer &&
			onStatus[0].Dropped+onStatus[1].Dropped == 0 && len(on[0].logs.linesWith("client-side"))+len(on[1].logs.linesWith("client-side")) == 0,
		"%s; %s", onStatus[0], onStatus[1])
	// Why not "about half each": 24 random uids split unevenly (6 and 18 in one run);
	// what holds is that each half read its own objects only.
	r.Check("with the gate on, each half read only its own objects: each less than the whole resource's informer, the two together about as much (plus a LIST of one object each)",
		onBytes[0] < wholeBytes && onBytes[1] < wholeBytes && onBytes[0]+onBytes[1] <= wholeBytes*5/4,
		"%d + %d = %d bytes against %d", onBytes[0], onBytes[1], onBytes[0]+onBytes[1], wholeBytes)
	r.Check("every event of new (created, updated, deleted) reached only the half its uid hashes into; the other half never heard of it",
		ownerWatched == 3 && otherWatched == 0 && otherDropped == 0, "half %d: %d watch events; half %d: %d watch events, %d dropped", owner, ownerWatched, 1-owner, otherWatched, otherDropped)

	offStatus := [2]listwatch.ShardStatus{off[0].status(), off[1].status()}
	r.Check("with the gate off, the caches are the same halves, filtered on the client: each dropped exactly the other half's ConfigMaps",
		slices.Equal(offNames[0], want[0]) && slices.Equal(offNames[1], want[1]) &&
			offStatus[0].Filtering == listwatch.FilteringClient && offStatus[1].Filtering == listwatch.FilteringClient &&
			int(offStatus[0].Dropped) == len(want[1]) && int(offStatus[1].Dropped) == len(want[0]),
		"%s; %s", offStatus[0], offStatus[1])
	warned := [2]int{len(off[0].logs.linesWith("WARN", "client-side filtering", "enable feature gate "+shard.FeatureGate)),
		len(off[1].logs.linesWith("WARN", "client-side filtering", "enable feature gate "+shard.FeatureGate))}
	r.Check("with the gate off, each half warned once that the apiserver did not apply ShardSelector", warned == [2]int{1, 1},
		"%d and %d warnings", warned[0], warned[1])
	r.Check("with the gate off, each half read at least the whole resource's bytes: everything crossed the wire",
		offBytes[0] >= wholeBytes && offBytes[1] >= wholeBytes, "%d and %d bytes against %d", offBytes[0], offBytes[1], wholeBytes)

	r.Answer = fmt.Sprintf("with the gate on the apiserver split them: %d and %d ConfigMaps of %d, disjoint, each half reading %.0f%% and %.0f%% of the whole resource's bytes, and every event of a new object reached only its half; "+
		"with the gate off the caches were the same halves, but each informer read %.0f%% and %.0f%% of the bytes, dropped the other half's %d and %d ConfigMaps itself, and warned once: %q",
		len(onNames[0]), len(onNames[1]), shardedConfigMaps, pct(onBytes[0], wholeBytes), pct(onBytes[1], wholeBytes),
		pct(offBytes[0], wholeBytes), pct(offBytes[1], wholeBytes), offStatus[0].Dropped, offStatus[1].Dropped, listwatch.FilteringClient.String())
	return r, nil
}

// pct is part as a percentage of whole.
func pct(part, whole int64) float64 { return 100 * float64(part) / float64(max(whole, 1)) }

// shardedInformersRecorded: with the gate on both halves were filtered by the server,
// dropped nothing and applied disjoint keys; with it off both filtered on the client,
// each dropped exactly the keys the other half applied (new aside, deleted before),
// and applied the keys its gate-on twin applied.
func shardedInformersRecorded(r recorded) Check {
	claim := "gate on: both halves filtered by the server, nothing dropped, disjoint keys; gate off: both filtered on the client, each dropping the other half's keys and keeping its twin's"
	of := func(process string) recorded {
		return r.where(func(e trace.Event) bool { return strings.HasPrefix(e.Source, process+"/") })
	}
	keys := func(rs recorded) map[string]bool {
		out := map[string]bool{}
		for _, e := range rs {
			if !strings.HasSuffix(e.Key, "/new") {
				out[e.Key] = true
			}
		}
		return out
	}
	filtering := func(rs recorded) string {
		f := rs.of(trace.ShardFiltering)
		if len(f) == 0 {
			return "none"
		}
		return f[len(f)-1].Type
	}
	var got []string
	ok := true
	var applied [2]map[string]bool
	for i := range 2 {
		on := of(fmt.Sprintf("%s%d", gateOnPrefix, i))
		applied[i] = keys(on.of(trace.Applied))
		dropped := len(on.of(trace.ShardDropped))
		ok = ok && filtering(on) == "server" && dropped == 0 && len(applied[i]) > 0
		got = append(got, fmt.Sprintf("on-%d: %s filtering, %d keys applied, %d dropped", i, filtering(on), len(applied[i]), dropped))
	}
	for k := range applied[0] {
		ok = ok && !applied[1][k]
	}
	for i := range 2 {
		off := of(fmt.Sprintf("%s%d", gateOffPrefix, i))
		kept, dropped := keys(off.of(trace.Applied)), keys(off.of(trace.ShardDropped))
		ok = ok && filtering(off) == "client" && sameKeys(kept, applied[i]) && sameKeys(dropped, applied[1-i])
		got = append(got, fmt.Sprintf("off-%d: %s filtering, %d keys applied (its twin's: %v), %d dropped (the other half's: %v)",
			i, filtering(off), len(kept), sameKeys(kept, applied[i]), len(dropped), sameKeys(dropped, applied[1-i])))
	}
	return check(claim, ok, "%s", strings.Join(got, "; "))
}

// sameKeys reports whether a and b hold the same keys.
func sameKeys(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
