package shard_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/sampleobjects"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/shard"
)

const (
	agreementObjects    = 10_000
	agreementNamespaces = 300
	// agreementWrites is how many creates, and as many updates and deletes, run while
	// the shards' informers watch.
	agreementWrites = 100
)

// agreementNamespace is the i-th namespace: a name from a hash of i, so that the
// namespaces spread over the hash space (ns-000 … ns-299 would all fall in one
// quarter of it: TestSimilarNamespacesCrowdIntoOneShard).
func agreementNamespace(i int) string {
	sum := sha256.Sum256([]byte(fmt.Sprint(i)))
	return fmt.Sprintf("team-%x", sum[:4])
}

// The shard package agrees with kube-apiserver v1.37 bit for bit. On a real
// apiserver holding 10,000 ConfigMaps in 300 namespaces, for N = 2, 3, 4 and 7 and
// for a split whose middle shard is the single hash of one object, over uid and over
// namespace, with the feature gate on and then off:
//
//   - gate on, the apiserver's answer to each shard's selector (before any filtering
//     of ours) holds exactly the objects Contains places there;
//   - the N shards' paged LISTs and their watch-lists are pairwise disjoint, their
//     union is the unsharded LIST, and each shard's LIST equals its watch-list;
//   - then, with every split's informers watching, creates, updates and deletes: each
//     event reaches exactly one informer of each split, the one whose shard contains
//     the object.
//
// With the gate off the same holds by client-side filtering, and every shard says so.
func TestShardsAgreeWithTheAPIServer(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	require.NoError(t, err)
	core, err := listwatch.NewRESTClient(env.Config, corev1.SchemeGroupVersion)
	require.NoError(t, err)

	began := time.Now()
	require.NoError(t, sampleobjects.InParallel(agreementNamespaces, func(i int) error {
		return post(ctx, core, "namespaces", "", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agreementNamespace(i)}})
	}))
	require.NoError(t, sampleobjects.InParallel(agreementObjects, func(i int) error {
		return post(ctx, core, "configmaps", agreementNamespace(i%agreementNamespaces), &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i)}, Data: map[string]string{"i": fmt.Sprint(i)}})
	}))
	t.Logf("created %d namespaces and %d ConfigMaps in %s", agreementNamespaces, agreementObjects, time.Since(began).Round(time.Millisecond))

	newLW := func() *listwatch.RESTListerWatcher[*corev1.ConfigMap] {
		lw, err := listwatch.New[*corev1.ConfigMap](core, listwatch.Options{Resource: "configmaps", Scheme: scheme, Protobuf: true,
			Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		return lw
	}
	round := 0
	for _, gate := range []bool{true, false} {
		if !gate {
			env.SetSharding(false)
			require.NoError(t, env.RestartAPIServer(ctx))
		}
		t.Run(fmt.Sprintf("gate=%v/the start '0x0' the field's doc comment shows", gate), func(t *testing.T) {
			// FAQ #29: gate on, the apiserver refuses it with 500, not 400; gate off,
			// it ignores it and sends everything.
			res, err := newLW().List(ctx, metav1.ListOptions{ShardSelector: "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')"})
			if gate {
				var status apierrors.APIStatus
				require.ErrorAs(t, err, &status)
				assert.Equal(t, int32(500), status.Status().Code, "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Len(t, keysOf(t, res.Items), agreementObjects)
		})
		for _, key := range []shard.Key{shard.UID, shard.Namespace} {
			t.Run(fmt.Sprintf("gate=%v/key=%s", gate, key), func(t *testing.T) {
				began := time.Now()
				all := unshardedList(t, ctx, newLW())
				require.Len(t, all, agreementObjects, "the server's objects: each round creates as many as it deletes")
				for _, split := range agreementSplits(t, key, all) {
					t.Run(split.name, func(t *testing.T) {
						checkSplit(t, ctx, gate, split.shards, all, newLW)
					})
				}
				listed := time.Now()
				checkEvents(t, ctx, round, gate, key, core, newLW, all)
				t.Logf("the splits' LISTs and watch-lists took %s, the events %s",
					listed.Sub(began).Round(time.Millisecond), time.Since(listed).Round(time.Millisecond))
				round++
			})
		}
	}
}

func post(ctx context.Context, core rest.Interface, resource, namespace string, obj any) error {
	req := core.Post().Resource(resource)
	if namespace != "" {
		req = req.Namespace(namespace)
	}
	return req.Body(obj).Do(ctx).Error()
}

// unshardedList is every ConfigMap of the agreement namespaces, by key.
func unshardedList(t *testing.T, ctx context.Context, lw *listwatch.RESTListerWatcher[*corev1.ConfigMap]) map[string]*corev1.ConfigMap {
	t.Helper()
	res, err := lw.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Empty(t, res.ShardSelector, "an unsharded LIST carries no shardInfo")
	out := map[string]*corev1.ConfigMap{}
	for _, o := range res.Items {
		if ours(o) {
			out[o.Namespace+"/"+o.Name] = o
		}
	}
	return out
}

// ours reports whether o is one of the test's objects, not one the apiserver keeps
// for itself (kube-system's).
func ours(o *corev1.ConfigMap) bool { return strings.HasPrefix(o.Namespace, "team-") }

type split struct {
	name   string
	shards []shard.Shard
}

// agreementSplits are Split(key, n) for n = 2, 3, 4, 7, and three shards whose
// middle one is a single hash — one object's — so that a bound rendered or compared
// off by one moves that object.
func agreementSplits(t *testing.T, key shard.Key, all map[string]*corev1.ConfigMap) []split {
	var out []split
	for _, n := range []int{2, 3, 4, 7} {
		s, err := shard.Split(key, n)
		require.NoError(t, err)
		out = append(out, split{fmt.Sprintf("N=%d", n), s})
	}
	first := all[slices.Min(slices.Collect(maps.Keys(all)))]
	h := shard.Hash(key.ValueOf(first))
	require.True(t, h > 0 && h < math.MaxUint64, "the edges of the space are tested by Split")
	var single []shard.Shard
	for _, r := range []shard.Range{{Start: 0, Last: h - 1}, {Start: h, Last: h}, {Start: h + 1, Last: math.MaxUint64}} {
		s, err := shard.New(key, r)
		require.NoError(t, err)
		single = append(single, s)
	}
	return append(out, split{fmt.Sprintf("one hash, %#x", h), single})
}

// checkSplit checks one split's shards against the server: what it sends for each
// shard, each shard's paged LIST and watch-list, and that they partition all.
func checkSplit(t *testing.T, ctx context.Context, gate bool, shards []shard.Shard, all map[string]*corev1.ConfigMap,
	newLW func() *listwatch.RESTListerWatcher[*corev1.ConfigMap]) {
	owner := map[string]int{}
	for i, s := range shards {
		want := map[string]bool{}
		for k, o := range all {
			if s.ContainsObject(o) {
				want[k] = true
			}
		}

		// What the apiserver sends for the selector, before any filtering of ours.
		raw, err := newLW().List(ctx, metav1.ListOptions{ShardSelector: s.String()})
		require.NoError(t, err)
		if gate {
			assert.Equal(t, s.String(), raw.ShardSelector, "shard %d: the LIST echoes the selector", i)
			assert.Equal(t, want, keysOf(t, raw.Items), "shard %d: the apiserver's objects are those Contains places there", i)
		} else {
			assert.Empty(t, raw.ShardSelector, "shard %d: gate off, no shardInfo", i)
			assert.Len(t, keysOf(t, raw.Items), len(all), "shard %d: gate off, every object comes back", i)
		}

		// A paged LIST through WithShard.
		sharded, err := listwatch.WithShard(newLW(), listwatch.ShardOptions{Shard: s, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		pager, err := reflector.NewPager[*corev1.ConfigMap](sharded, reflector.PagerOptions{PageSize: 1000})
		require.NoError(t, err)
		listed, _, err := pager.List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		got := keysOf(t, listed.Items)
		assert.Equal(t, want, got, "shard %d: its paged LIST", i)
		st := sharded.Status()
		if gate {
			assert.Equal(t, listwatch.FilteringServer, st.Filtering, "shard %d", i)
			assert.Zero(t, st.Dropped, "shard %d: the server sent only the shard", i)
		} else {
			assert.Equal(t, listwatch.FilteringClient, st.Filtering, "shard %d", i)
			outside := 0 // of every ConfigMap on the server, the test's and the system's
			for _, o := range raw.Items {
				if !s.ContainsObject(o) {
					outside++
				}
			}
			assert.Equal(t, uint64(outside), st.Dropped, "shard %d: the client dropped the rest", i)
		}

		// A watch-list, through an informer.
		inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](newLW(), informer.Options[*corev1.ConfigMap]{
			Shard: s, InitialList: reflector.WatchList, Logger: slog.New(slog.DiscardHandler)})
		infCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); inf.Run(infCtx) }()
		require.NoError(t, informer.WaitForCacheSync(ctx, inf))
		cached := map[string]bool{}
		for _, o := range inf.Indexer().List() {
			if _, ok := all[o.Namespace+"/"+o.Name]; ok {
				cached[o.Namespace+"/"+o.Name] = true
			}
		}
		stop()
		<-done
		assert.Equal(t, want, cached, "shard %d: its watch-list", i)

		for k := range got {
			if prev, taken := owner[k]; taken {
				t.Errorf("%s is in shards %d and %d", k, prev, i)
			}
			owner[k] = i
		}
	}
	assert.Len(t, owner, len(all), "the union of the shards is the unsharded LIST")
}

// keysOf is the set of the test's objects among items; an object listed twice fails
// the test, which a set alone would hide.
func keysOf(t *testing.T, items []*corev1.ConfigMap) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, o := range items {
		if ours(o) {
			key := o.Namespace + "/" + o.Name
			assert.False(t, out[key], "%s listed twice", key)
			out[key] = true
		}
	}
	return out
}

// seen records, for one informer, every change event by "type key".
type seen struct {
	mu     sync.Mutex
	events map[string]int
}

func (s *seen) add(ev string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events[ev]++
}

func (s *seen) snapshot() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.events)
}

// checkEvents runs the informers of every Split(key, n) at once, makes
// agreementWrites creates, updates and deletes, and checks that each event reached
// exactly one informer of each split: the one whose shard contains the object.
func checkEvents(t *testing.T, ctx context.Context, round int, gate bool, key shard.Key, core rest.Interface,
	newLW func() *listwatch.RESTListerWatcher[*corev1.ConfigMap], all map[string]*corev1.ConfigMap) {
	type member struct {
		shard shard.Shard
		inf   *informer.SharedIndexInformer[*corev1.ConfigMap]
		seen  *seen
	}
	ns := []int{2, 3, 4, 7}
	groups := make([][]member, len(ns))
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	for g, n := range ns {
		shards, err := shard.Split(key, n)
		require.NoError(t, err)
		for _, s := range shards {
			m := member{shard: s, seen: &seen{events: map[string]int{}}}
			m.inf = informer.NewSharedIndexInformer[*corev1.ConfigMap](newLW(), informer.Options[*corev1.ConfigMap]{
				Shard: s, Logger: slog.New(slog.DiscardHandler)})
			rec := m.seen
			_, err := m.inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
				AddFunc: func(o *corev1.ConfigMap, initial bool) {
					if !initial {
						rec.add("add " + o.Namespace + "/" + o.Name)
					}
				},
				UpdateFunc: func(_, o *corev1.ConfigMap) { rec.add("update " + o.Namespace + "/" + o.Name) },
				DeleteFunc: func(d informer.DeletedObject[*corev1.ConfigMap]) {
					rec.add("delete " + d.OptionalObj.Namespace + "/" + d.OptionalObj.Name)
				},
			})
			require.NoError(t, err)
			wg.Go(func() { m.inf.Run(runCtx) })
			groups[g] = append(groups[g], m)
		}
	}
	for _, g := range groups {
		for _, m := range g {
			require.NoError(t, informer.WaitForCacheSync(ctx, m.inf))
		}
	}

	existing := slices.Sorted(maps.Keys(all))
	want := map[string]*corev1.ConfigMap{} // "type key" → the object, for its shard
	require.NoError(t, sampleobjects.InParallel(agreementWrites, func(i int) error {
		created := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Namespace: agreementNamespace(i * 7 % agreementNamespaces), Name: fmt.Sprintf("new-%d-%05d", round, i)}}
		var out corev1.ConfigMap
		if err := core.Post().Namespace(created.Namespace).Resource("configmaps").Body(created).Do(ctx).Into(&out); err != nil {
			return err
		}
		up := all[existing[i]].DeepCopy()
		// A change of its own each round: an update that changes nothing makes no event.
		up.Data = map[string]string{"updated-in-round": fmt.Sprint(round)}
		up.ResourceVersion = ""
		if err := core.Put().Namespace(up.Namespace).Resource("configmaps").Name(up.Name).Body(up).Do(ctx).Error(); err != nil {
			return err
		}
		gone := all[existing[len(existing)-1-i]]
		if err := core.Delete().Namespace(gone.Namespace).Resource("configmaps").Name(gone.Name).Do(ctx).Error(); err != nil {
			return err
		}
		return nil
	}))
	for i := range agreementWrites {
		created := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Namespace: agreementNamespace(i * 7 % agreementNamespaces), Name: fmt.Sprintf("new-%d-%05d", round, i)}}
		// The created object's uid is the server's: read it back from the shards'
		// caches below; by namespace it is known now.
		want["add "+created.Namespace+"/"+created.Name] = created
		want["update "+existing[i]] = all[existing[i]]
		want["delete "+existing[len(existing)-1-i]] = all[existing[len(existing)-1-i]]
	}

	for g, members := range groups {
		deadline := time.Now().Add(time.Minute)
		var union map[string]int
		for {
			union = map[string]int{}
			for _, m := range members {
				for ev, c := range m.seen.snapshot() {
					union[ev] += c
				}
			}
			if len(union) >= len(want) || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		assert.Equal(t, slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(union)), "N=%d: every change reached an informer", ns[g])
		for ev, c := range union {
			assert.Equal(t, 1, c, "N=%d: %s reached %d informers", ns[g], ev, c)
		}
		for i, m := range members {
			for ev := range m.seen.snapshot() {
				o := want[ev]
				if o == nil {
					continue
				}
				if ev[:4] == "add " {
					// Its uid is the server's: take it from the cache that holds it.
					if c, ok, _ := m.inf.Indexer().GetByKey(o.Namespace + "/" + o.Name); ok {
						o = c
					} else if key == shard.UID {
						continue
					}
				}
				assert.True(t, m.shard.ContainsObject(o), "N=%d: %s reached shard %d, which does not contain it", ns[g], ev, i)
			}
			st, _ := m.inf.Sharding()
			if gate {
				assert.Equal(t, listwatch.FilteringServer, st.Filtering)
			} else {
				assert.Equal(t, listwatch.FilteringClient, st.Filtering)
			}
		}
	}
}
