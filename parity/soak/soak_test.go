package soak

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

const namespace = "soak"

// TestSoak runs every configuration, via each apiserver, with a fast and a slow
// handler, while the writer writes and the faults fall (knobs_test.go sizes it). At
// each checkpoint and at the end, with the faults ended and the writes paused, every
// cache and every handler's view must equal a consistent LIST within the settle time;
// every notification must have followed from the handler's view (story_test.go); every
// resourceVersion a handler heard of must be one the writer wrote. Each failure of
// these is a divergence; the test fails if there is one.
func TestSoak(t *testing.T) {
	k, err := knobsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.Options{APIServerFlags: []string{"--watch-cache-sizes=configmaps#0"}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, err := env.StartSecondAPIServer(ctx, "--watch-cache-sizes=configmaps#100")
	if err != nil {
		t.Fatal(err)
	}
	proxyA, err := testenv.StartProxy(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer proxyA.Close()
	proxyB, err := testenv.StartProxy(b.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer proxyB.Close()
	direct, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{env: env, b: b, proxyA: proxyA, proxyB: proxyB, direct: direct, otherNS: "soak-other"}
	for _, ns := range []string{namespace, c.otherNS} {
		if _, err := direct.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	confs := configurations
	if k.shards > 0 {
		sharded, _, err := shardedConfigurations(k.shards)
		if err != nil {
			t.Fatal(err)
		}
		confs = append(slices.Clone(confs), sharded...)
	}
	logs, logger := soakLogs(t)
	var sides []*side
	informerCtx, stopInformers := context.WithCancel(ctx)
	defer func() {
		stopInformers()
		for _, s := range sides {
			s.shutdown() // waits for the informer's goroutines: none outlives the test
		}
	}()
	for _, via := range []struct {
		name  string
		proxy *testenv.Proxy
		cfg   func() *testenv.Proxy
	}{{"A", proxyA, nil}, {"B", proxyB, nil}} {
		base := env.Config
		if via.name == "B" {
			base = b.Config
		}
		for _, conf := range confs {
			name := conf.name + " via " + via.name
			stories := []*story{newStory(name+" / fast", 0), newStory(name+" / slow", k.slow)}
			s, err := conf.start(informerCtx, via.proxy.Config(base), namespace, logger.With("informer", name), stories)
			if err != nil {
				t.Fatal(err)
			}
			s.name = name
			if s.split != "" {
				s.split += " via " + via.name
			}
			sides = append(sides, s)
		}
	}

	w := newWriter(direct, namespace, k.objects, k.seed)
	in := &injector{r: rand.New(rand.NewPCG(k.seed, 2)), c: c, counts: map[string]int{}}
	sum := &summary{knobs: k, started: time.Now()}
	faultsAt, apiAt, etcdAt, checkAt := spread(k.faults, k.ops), spread(k.apiRestarts, k.ops), spread(k.etcdRestarts, k.ops), spread(k.checkpoints, k.ops)
	for i := range k.ops {
		if err := w.step(ctx); err != nil {
			t.Fatal(err)
		}
		for range faultsAt[i] {
			if err := in.inject(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for range apiAt[i] {
			if err := env.KillAPIServer(); err != nil {
				t.Fatal(err)
			}
			if err := env.StartAPIServer(ctx); err != nil {
				t.Fatal(err)
			}
			sum.apiRestarts++
		}
		for range etcdAt[i] {
			if err := env.KillEtcd(); err != nil {
				t.Fatal(err)
			}
			if err := env.StartEtcd(ctx); err != nil {
				t.Fatal(err)
			}
			sum.etcdRestarts++
		}
		if err := in.tick(); err != nil {
			t.Fatal(err)
		}
		for range checkAt[i] {
			sum.checkpoint(ctx, t, fmt.Sprintf("after op %d", i+1), in, w, sides)
		}
	}
	sum.checkpoint(ctx, t, "at the end", in, w, sides)
	sum.finish(w, in, sides)

	report := sum.markdown()
	t.Log("\n" + report)
	if path := os.Getenv("SOAK_SUMMARY"); path != "" {
		if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
			t.Error(err)
		}
	}
	if len(sum.divergences) > 0 {
		t.Errorf("%d divergences; the libraries' logs are in %s:\n%s", len(sum.divergences), logs, strings.Join(first(sum.divergences, 30), "\n"))
		return
	}
	_ = os.RemoveAll(logs)
}

// soakLogs sends our informers' logs and klog's (client-go's) to one file in a
// directory that is kept when the soak fails. A soak relists hundreds of times, and
// the logs say why each time; they are the first place to look after a divergence.
func soakLogs(t *testing.T) (string, *slog.Logger) {
	dir, err := os.MkdirTemp("", "soak-logs-")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "informers.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	h := slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})
	klog.SetLogger(logr.FromSlogHandler(h.WithAttrs([]slog.Attr{slog.String("library", "client-go")})))
	t.Cleanup(klog.ClearLogger)
	return dir, slog.New(h.WithAttrs([]slog.Attr{slog.String("library", "ours")}))
}

// summary collects what a soak did and found.
type summary struct {
	knobs        knobs
	started      time.Time
	elapsed      time.Duration
	apiRestarts  int
	etcdRestarts int
	checkpoints  []checkpointResult
	divergences  []string
	faultCounts  map[string]int
	writes       map[string]int
	stories      []storyResult
	uncertain    int
}

type checkpointResult struct {
	label     string
	objects   int
	converged time.Duration // how long until every cache and handler equalled the LIST
	slowest   string        // the cache or handler that took longest
	// slowestCache is the cache whose objects' resourceVersions trailed the LIST's
	// longest, and for how long: a handler's view can only trail its cache, so this
	// says which informer's watch was behind.
	slowestCache string
	heapMB       float64
}

type storyResult struct {
	name                      string
	notifications, tombstones int
}

// checkpoint ends the faults, pauses the writes (by not writing), and waits until every
// cache and every handler's view equals a consistent LIST from A.
func (s *summary) checkpoint(ctx context.Context, t *testing.T, label string, in *injector, w *writer, sides []*side) {
	if err := in.endAll(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var want map[string]string
	uids := map[string]string{} // key → uid, which places an object in a shard
	for {
		list, err := w.cs.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{})
		if err == nil {
			want = map[string]string{}
			for _, cm := range list.Items {
				want[namespace+"/"+cm.Name] = cm.ResourceVersion
				uids[namespace+"/"+cm.Name] = string(cm.UID)
			}
			break
		}
		if time.Since(start) > s.knobs.settle {
			t.Fatalf("checkpoint %s: no LIST from A within %v: %v", label, s.knobs.settle, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// A sharded side must equal the LIST's objects in its shard.
	wantFor := func(sd *side) map[string]string {
		if sd.shard.IsZero() {
			return want
		}
		out := map[string]string{}
		for k, rv := range want {
			if sd.shard.Contains(uids[k]) {
				out[k] = rv
			}
		}
		return out
	}
	// caughtUp is when each cache and each handler's view first equalled the LIST: the
	// slowest is named in the summary, so a long wait says who it was waiting for.
	caughtUp := map[string]time.Duration{}
	caches := map[string]bool{} // the names in caughtUp that are caches
	var behind []string
	for {
		behind = behind[:0]
		note := func(name, d string) {
			if d != "" {
				behind = append(behind, name+" "+d)
			} else if _, ok := caughtUp[name]; !ok {
				caughtUp[name] = time.Since(start)
			}
		}
		for _, sd := range sides {
			caches[sd.name+": cache"] = true
			sdWant := wantFor(sd)
			note(sd.name+": cache", differ(sd.cache(), sdWant))
			for _, st := range sd.stories {
				view, _ := st.snapshot()
				note(st.name+": handler's view", differ(view, sdWant))
			}
		}
		if len(behind) == 0 || time.Since(start) > s.knobs.settle {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, b := range behind {
		s.divergences = append(s.divergences, fmt.Sprintf("checkpoint %s, after %v: %s", label, s.knobs.settle, b))
	}
	for _, d := range partitions(sides, want) {
		s.divergences = append(s.divergences, fmt.Sprintf("checkpoint %s: %s", label, d))
	}
	for _, sd := range sides {
		for _, st := range sd.stories {
			s.divergences = append(s.divergences, st.unwritten(w.history, w.uncertain)...)
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	slowest := last(caughtUp, nil)
	slowestCache := last(caughtUp, caches)
	if slowestCache != "" {
		slowestCache = fmt.Sprintf("%s, after %v", slowestCache, caughtUp[slowestCache].Round(time.Millisecond))
	}
	s.checkpoints = append(s.checkpoints, checkpointResult{label: label, objects: len(want), converged: time.Since(start), slowest: slowest,
		slowestCache: slowestCache, heapMB: float64(ms.HeapAlloc) / (1 << 20)})
	t.Logf("checkpoint %s: %d objects, every cache and handler equal to the LIST after %v (the last: %s; the last cache: %s)",
		label, len(want), time.Since(start).Round(time.Millisecond), slowest, slowestCache)
}

// finish adds what the stories saw and every rule they found broken.
func (s *summary) finish(w *writer, in *injector, sides []*side) {
	s.elapsed = time.Since(s.started)
	s.faultCounts = in.counts
	s.writes = w.counts
	s.uncertain = len(w.uncertain)
	for _, sd := range sides {
		for _, st := range sd.stories {
			st.mu.Lock()
			s.stories = append(s.stories, storyResult{st.name, st.notifications, st.tombstones})
			s.divergences = append(s.divergences, st.violations...)
			st.mu.Unlock()
		}
	}
}

// differ describes how got differs from want ("" when equal): how many keys, and the
// first few.
func differ(got, want map[string]string) string {
	var diffs []string
	for _, key := range slices.Sorted(maps.Keys(want)) {
		if got[key] != want[key] {
			diffs = append(diffs, fmt.Sprintf("%s %q≠%q", key, got[key], want[key]))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[key]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s %q not in the LIST", key, got[key]))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprintf("differs from the LIST in %d keys: %s", len(diffs), strings.Join(first(diffs, 3), ", "))
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

// partitions checks each split's sharded caches against the LIST: every object in
// exactly one of them, and nothing else. Each cache was already compared with its
// shard's part of the LIST; this is the claim a reader makes of a split, checked as
// stated.
func partitions(sides []*side, want map[string]string) []string {
	splits := map[string][]*side{}
	for _, sd := range sides {
		if sd.split != "" {
			splits[sd.split] = append(splits[sd.split], sd)
		}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(splits)) {
		union := map[string]string{}
		for _, sd := range splits[name] {
			for k, rv := range sd.cache() {
				if _, twice := union[k]; twice {
					out = append(out, fmt.Sprintf("%s: %s is in two shards' caches", name, k))
				}
				union[k] = rv
			}
		}
		if d := differ(union, want); d != "" {
			out = append(out, fmt.Sprintf("%s: the union of the shards' caches %s", name, d))
		}
	}
	return out
}
