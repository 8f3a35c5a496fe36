package listwatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeinternals/informers/internal/testrig/testlog"
	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/shard"
	"github.com/kubeinternals/informers/trace"
)

// firstHalf is shard 0 of two over uid: [0, 2^63).
func firstHalf(t *testing.T) shard.Shard {
	t.Helper()
	halves, err := shard.Split(shard.UID, 2)
	require.NoError(t, err)
	return halves[0]
}

// shardedCM is a ConfigMap named name whose uid falls inside s when in is true, and
// outside it when in is false.
func shardedCM(t *testing.T, s shard.Shard, name string, in bool) *corev1.ConfigMap {
	t.Helper()
	for i := range 1000 {
		uid := fmt.Sprintf("%s-uid-%d", name, i)
		if s.Contains(uid) == in {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid), ResourceVersion: "1"}}
		}
	}
	t.Fatalf("no uid for %s with in=%v", name, in)
	return nil
}

// scriptedServer plays an apiserver for a Sharded: it records the options of every
// request, answers each LIST with pages (echoing the selector when it shards), and
// hands out FakeWatches.
type scriptedServer struct {
	shards bool
	pages  [][]*corev1.ConfigMap

	mu      sync.Mutex
	lists   []metav1.ListOptions
	watches []metav1.ListOptions
	watch   *reflector.FakeWatch[*corev1.ConfigMap]
}

func (s *scriptedServer) lw() reflector.ListWatch[*corev1.ConfigMap] {
	return reflector.ListWatch[*corev1.ConfigMap]{
		ListFunc: func(_ context.Context, opts metav1.ListOptions) (reflector.ListResult[*corev1.ConfigMap], error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.lists = append(s.lists, opts)
			page := 0
			if opts.Continue != "" {
				fmt.Sscan(opts.Continue, &page)
			}
			res := reflector.ListResult[*corev1.ConfigMap]{ResourceVersion: "10"}
			if page < len(s.pages) {
				res.Items = append(res.Items, s.pages[page]...)
			}
			if page+1 < len(s.pages) {
				res.Continue = fmt.Sprint(page + 1)
			}
			if s.shards {
				res.ShardSelector = opts.ShardSelector
			}
			return res, nil
		},
		WatchFunc: func(_ context.Context, opts metav1.ListOptions) (reflector.Watch[*corev1.ConfigMap], error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.watches = append(s.watches, opts)
			s.watch = reflector.NewFakeWatch[*corev1.ConfigMap]()
			return s.watch, nil
		},
	}
}

func names(objs []*corev1.ConfigMap) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.Name
	}
	return out
}

// Every page of a paged LIST and every WATCH carries the shard's selector, whatever
// the caller's options held.
func TestEveryRequestOfAShardCarriesItsSelector(t *testing.T) {
	half := firstHalf(t)
	srv := &scriptedServer{shards: true, pages: [][]*corev1.ConfigMap{
		{shardedCM(t, half, "a", true)}, {shardedCM(t, half, "b", true)}, {shardedCM(t, half, "c", true)},
	}}
	s, err := WithShard(srv.lw(), ShardOptions{Shard: half})
	require.NoError(t, err)
	pager, err := reflector.NewPager[*corev1.ConfigMap](s, reflector.PagerOptions{PageSize: 1})
	require.NoError(t, err)
	res, paginated, err := pager.List(t.Context(), metav1.ListOptions{ResourceVersion: "0", ShardSelector: "something else"})
	require.NoError(t, err)
	assert.True(t, paginated)
	assert.Equal(t, []string{"a", "b", "c"}, names(res.Items))

	yes := true
	w, err := s.Watch(t.Context(), metav1.ListOptions{ResourceVersion: "10"})
	require.NoError(t, err)
	w.Stop()
	w, err = s.Watch(t.Context(), metav1.ListOptions{SendInitialEvents: &yes, AllowWatchBookmarks: true})
	require.NoError(t, err)
	w.Stop()

	want := half.String()
	require.Len(t, srv.lists, 4, "three pages and the watch-list's probe")
	for i, o := range srv.lists {
		assert.Equal(t, want, o.ShardSelector, "LIST %d", i)
	}
	assert.Equal(t, []string{"", "1", "2", ""}, []string{srv.lists[0].Continue, srv.lists[1].Continue, srv.lists[2].Continue, srv.lists[3].Continue})
	assert.Equal(t, int64(1), srv.lists[3].Limit, "the probe before a watch-list asks for one object")
	require.Len(t, srv.watches, 2)
	for i, o := range srv.watches {
		assert.Equal(t, want, o.ShardSelector, "WATCH %d", i)
	}
	st := s.Status()
	assert.Equal(t, FilteringServer, st.Filtering)
	assert.Zero(t, st.Dropped)
}

// A LIST without shardInfo means the apiserver ignored the selector: the objects
// outside the shard are dropped and counted, the first is logged, and client-side
// filtering is logged once at Warn level however many pages say it.
func TestAServerThatIgnoresTheSelectorIsFilteredOnTheClient(t *testing.T) {
	half := firstHalf(t)
	srv := &scriptedServer{pages: [][]*corev1.ConfigMap{
		{shardedCM(t, half, "in-1", true), shardedCM(t, half, "out-1", false), shardedCM(t, half, "in-2", true)},
		{shardedCM(t, half, "out-2", false), shardedCM(t, half, "in-3", true)},
	}}
	logs := &testlog.Recorder{}
	dropped, clientFiltering := &countMetric{}, &countMetric{}
	s, err := WithShard(srv.lw(), ShardOptions{Shard: half, Logger: slog.New(logs), Dropped: dropped, ClientFiltering: clientFiltering})
	require.NoError(t, err)
	assert.Equal(t, FilteringUnknown, s.Status().Filtering)

	for range 2 {
		pager, err := reflector.NewPager[*corev1.ConfigMap](s, reflector.PagerOptions{PageSize: 3})
		require.NoError(t, err)
		res, _, err := pager.List(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
		assert.Equal(t, []string{"in-1", "in-2", "in-3"}, names(res.Items))
	}
	st := s.Status()
	assert.Equal(t, FilteringClient, st.Filtering)
	assert.Equal(t, uint64(4), st.Dropped, "two outside objects, listed twice")
	assert.Equal(t, 4.0, dropped.value())
	assert.Equal(t, 1.0, clientFiltering.value())
	warns := logs.Lines("client-side filtering")
	require.Len(t, warns, 1, "%q", warns)
	assert.Contains(t, warns[0], "WARN")
	assert.Contains(t, warns[0], "enable feature gate ShardedListAndWatch")
	drops := logs.Lines("dropped an object outside the shard")
	require.Len(t, drops, 1, "%q", drops)
	assert.Contains(t, drops[0], "name=out-1")
	assert.Contains(t, st.String(), "client-side filtering")
	assert.Contains(t, st.String(), "4 objects outside the shard dropped")

	// The apiserver restarted with the gate on: the next LIST says so.
	srv.mu.Lock()
	srv.shards = true
	srv.pages = [][]*corev1.ConfigMap{{shardedCM(t, half, "in-1", true)}}
	srv.mu.Unlock()
	_, err = s.List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, FilteringServer, s.Status().Filtering)
	assert.Equal(t, 0.0, clientFiltering.value())
	assert.Len(t, logs.Lines("applies ShardSelector again"), 1)
}

// A watch passes on the events of objects inside the shard, every bookmark and every
// error, in order, and drops the events of objects outside it. An object outside the
// shard in a watch shows the apiserver does not filter.
func TestAShardsWatchDropsTheEventsOfObjectsOutsideIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		half := firstHalf(t)
		srv := &scriptedServer{shards: true}
		s, err := WithShard(srv.lw(), ShardOptions{Shard: half, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		_, err = s.List(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
		require.Equal(t, FilteringServer, s.Status().Filtering)

		w, err := s.Watch(t.Context(), metav1.ListOptions{ResourceVersion: "10"})
		require.NoError(t, err)
		in, out := shardedCM(t, half, "in", true), shardedCM(t, half, "out", false)
		bookmark := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "20"}}
		go func() {
			srv.watch.Add(in)
			srv.watch.Add(out)
			srv.watch.Modify(out)
			srv.watch.Modify(in)
			srv.watch.Bookmark(bookmark)
			srv.watch.Delete(out)
			srv.watch.Delete(in)
			srv.watch.Error(&metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired})
			srv.watch.Close()
		}()
		var got []string
		for ev := range w.ResultChan() {
			name := ""
			if ev.Object != nil {
				name = ev.Object.Name
			}
			got = append(got, fmt.Sprintf("%s %s", ev.Type, name))
		}
		w.Stop()
		assert.Equal(t, []string{"ADDED in", "MODIFIED in", "BOOKMARK ", "DELETED in", "ERROR "}, got)
		assert.Equal(t, uint64(3), s.Status().Dropped)
		assert.Equal(t, FilteringClient, s.Status().Filtering, "an object outside the shard arrived")
	})
}

// Stop ends the goroutine that filters a watch, even while an event is waiting.
func TestStoppingAShardsWatchLeavesNoGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &scriptedServer{shards: true}
		s, err := WithShard(srv.lw(), ShardOptions{Shard: firstHalf(t)})
		require.NoError(t, err)
		w, err := s.Watch(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
		go srv.watch.Add(shardedCM(t, firstHalf(t), "in", true))
		synctest.Wait() // the filter holds the event, nobody reads
		w.Stop()
		w.Stop()
		synctest.Wait()
		_, open := <-w.ResultChan()
		assert.False(t, open)
	})
}

// With RequireServerSharding, a LIST without shardInfo fails with
// ErrServerNotSharding and hands over nothing; so does a watch-list whose probe
// says the same, and a plain watch once that is known.
func TestRequireServerShardingRefusesAServerThatIgnoresTheSelector(t *testing.T) {
	half := firstHalf(t)
	srv := &scriptedServer{pages: [][]*corev1.ConfigMap{{shardedCM(t, half, "in", true)}}}
	s, err := WithShard(srv.lw(), ShardOptions{Shard: half, RequireServerSharding: true, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)

	res, err := s.List(t.Context(), metav1.ListOptions{})
	require.ErrorIs(t, err, ErrServerNotSharding)
	assert.Empty(t, res.Items)
	assert.Contains(t, err.Error(), "enable its feature gate ShardedListAndWatch")

	yes := true
	_, err = s.Watch(t.Context(), metav1.ListOptions{SendInitialEvents: &yes})
	require.ErrorIs(t, err, ErrServerNotSharding)
	_, err = s.Watch(t.Context(), metav1.ListOptions{ResourceVersion: "10"})
	require.ErrorIs(t, err, ErrServerNotSharding)
	assert.Empty(t, srv.watches, "no watch was opened")

	// The same server with the gate on: the probe says so and the watch opens.
	srv.shards = true
	w, err := s.Watch(t.Context(), metav1.ListOptions{SendInitialEvents: &yes})
	require.NoError(t, err)
	w.Stop()
	assert.Equal(t, FilteringServer, s.Status().Filtering)
}

// With RequireServerSharding, an object outside the shard in an open watch — the
// apiserver restarted without the gate — ends the watch with an error event.
func TestRequireServerShardingEndsAWatchThatCarriesAnObjectOutsideTheShard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		half := firstHalf(t)
		srv := &scriptedServer{shards: true}
		s, err := WithShard(srv.lw(), ShardOptions{Shard: half, RequireServerSharding: true, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		w, err := s.Watch(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
		go func() {
			srv.watch.Add(shardedCM(t, half, "in", true))
			srv.watch.Add(shardedCM(t, half, "out", false))
		}()
		var got []reflector.Event[*corev1.ConfigMap]
		for ev := range w.ResultChan() {
			got = append(got, ev)
		}
		w.Stop()
		require.Len(t, got, 2)
		assert.Equal(t, watch.Added, got[0].Type)
		require.Equal(t, watch.Error, got[1].Type)
		assert.Contains(t, got[1].Status.Message, "enable its feature gate ShardedListAndWatch")
		_, err = s.Watch(t.Context(), metav1.ListOptions{})
		assert.ErrorIs(t, err, ErrServerNotSharding)
	})
}

// The namespace key keeps every object of a namespace on one side.
func TestANamespaceShardKeepsWholeNamespaces(t *testing.T) {
	halves, err := shard.Split(shard.Namespace, 2)
	require.NoError(t, err)
	var inNS, outNS string
	for i := 0; inNS == "" || outNS == ""; i++ {
		ns := fmt.Sprintf("team-%d", i)
		if halves[0].Contains(ns) {
			inNS = ns
		} else {
			outNS = ns
		}
	}
	cm := func(ns, name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + name)}}
	}
	srv := &scriptedServer{pages: [][]*corev1.ConfigMap{{cm(inNS, "a"), cm(outNS, "b"), cm(inNS, "c"), cm(outNS, "d")}}}
	s, err := WithShard(srv.lw(), ShardOptions{Shard: halves[0], Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	res, err := s.List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "c"}, names(res.Items))
}

func TestWithShardRefusesBadInput(t *testing.T) {
	_, err := WithShard[*corev1.ConfigMap](nil, ShardOptions{Shard: firstHalf(t)})
	assert.ErrorIs(t, err, ErrInvalidOptions)
	_, err = WithShard((&scriptedServer{}).lw(), ShardOptions{})
	assert.ErrorIs(t, err, ErrInvalidOptions)
	assert.Contains(t, err.Error(), "needs a Shard")
}

// A probe that fails fails the watch-list, with the reason.
func TestAFailedProbeFailsTheWatchList(t *testing.T) {
	boom := errors.New("connection refused")
	lw := reflector.ListWatch[*corev1.ConfigMap]{
		ListFunc: func(context.Context, metav1.ListOptions) (reflector.ListResult[*corev1.ConfigMap], error) {
			return reflector.ListResult[*corev1.ConfigMap]{}, boom
		},
		WatchFunc: func(context.Context, metav1.ListOptions) (reflector.Watch[*corev1.ConfigMap], error) {
			t.Fatal("no watch without an answered probe")
			return nil, nil
		},
		WatchListUnsupported: true,
	}
	s, err := WithShard(lw, ShardOptions{Shard: firstHalf(t)})
	require.NoError(t, err)
	assert.True(t, s.IsWatchListSemanticsUnSupported(), "passed on from the wrapped ListerWatcher")
	yes := true
	_, err = s.Watch(t.Context(), metav1.ListOptions{SendInitialEvents: &yes})
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "limit=1")
}

// countMetric is a CounterMetric and GaugeMetric that keeps its value.
type countMetric struct {
	mu sync.Mutex
	v  float64
}

func (m *countMetric) Inc()          { m.mu.Lock(); m.v++; m.mu.Unlock() }
func (m *countMetric) Set(v float64) { m.mu.Lock(); m.v = v; m.mu.Unlock() }
func (m *countMetric) value() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.v
}

// A traced Sharded reports who filters when that changes — not on every LIST — and
// every object it drops, with the object's key and hash, under its Source.
func TestAShardedListerWatcherTracesWhoFiltersAndWhatItDrops(t *testing.T) {
	half := firstHalf(t)
	out := shardedCM(t, half, "out", false)
	out.Namespace, out.ResourceVersion = "ns", "7"
	srv := &scriptedServer{pages: [][]*corev1.ConfigMap{{shardedCM(t, half, "in", true), out}}}
	var rec trace.Recorder
	s, err := WithShard(srv.lw(), ShardOptions{Shard: half, Logger: slog.New(slog.DiscardHandler),
		Tracer: trace.New(rec.Record), Source: "configmaps"})
	require.NoError(t, err)
	for range 2 {
		_, err = s.List(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
	}
	srv.mu.Lock()
	srv.shards, srv.pages = true, nil
	srv.mu.Unlock()
	for range 2 {
		_, err = s.List(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
	}

	var got []string
	for _, e := range rec.Events() {
		assert.Equal(t, trace.Reflector, e.Stage)
		assert.Equal(t, "configmaps", e.Source)
		got = append(got, e.String())
	}
	hash := fmt.Sprintf("0x%016x", shard.Hash(string(out.UID)))
	assert.Equal(t, []string{
		"shard filtering on the client: the apiserver did not apply ShardSelector — enable feature gate ShardedListAndWatch [" + half.String() + "]",
		"shard dropped ns/out rv=7: " + string(out.UID) + " hashes to " + hash + ", outside the shard",
		"shard dropped ns/out rv=7: " + string(out.UID) + " hashes to " + hash + ", outside the shard",
		"shard filtering on the server: a LIST echoed the selector in metadata.shardInfo [" + half.String() + "]",
	}, got)
}
