package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/trace"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// at is e stamped t0 + ms milliseconds.
func at(ms int, e trace.Event) trace.Event {
	e.Time = t0.Add(time.Duration(ms) * time.Millisecond)
	return e
}

func TestPipelineFoldsEventsIntoBoxes(t *testing.T) {
	p := newPipeline(2)
	p.handler("enqueueFoo").Informer = "foos"
	r := func(k trace.Kind, e trace.Event) trace.Event {
		e.Stage, e.Kind, e.Source = trace.Reflector, k, "foos"
		return e
	}
	snap := func(ms int) snapshot {
		return p.snapshot(t0.Add(time.Duration(ms)*time.Millisecond), []string{"foos"}, []string{"enqueueFoo"})
	}
	refl := func(ms int) reflectorBox { return snap(ms).Informers[0].Reflector }

	t.Run("the reflector box follows LIST, WATCH, the watch's end, the relist and the backoff", func(t *testing.T) {
		p.apply(at(0, r(trace.ListStarted, trace.Event{})))
		assert.Equal(t, "LIST", refl(0).Phase)
		p.apply(at(1, r(trace.Listed, trace.Event{ResourceVersion: "10"})))
		p.apply(at(2, r(trace.WatchStarted, trace.Event{ResourceVersion: "10"})))
		assert.Equal(t, "WATCH", refl(2).Phase)
		p.apply(at(3, r(trace.WatchEvent, trace.Event{Type: "ADDED", Key: "explore/demo", ResourceVersion: "11"})))
		p.apply(at(4, r(trace.WatchEnded, trace.Event{Reason: "the stream ended"})))
		assert.Equal(t, "WATCH ENDED", refl(4).Phase)
		p.apply(at(5, r(trace.Relist, trace.Event{Reason: "410 Gone"})))
		p.apply(at(6, r(trace.Backoff, trace.Event{Duration: 800 * time.Millisecond, Reason: "before the relist"})))
		got := refl(6)
		assert.Equal(t, reflectorBox{Phase: "BACKOFF", RV: "11", FilledBy: "LIST", Lists: 1, Watches: 1, WatchEvents: 1, Relists: 1,
			LastRelist: "410 Gone", LastWatchEnd: "the stream ended", LastBackoff: "800ms: before the relist"}, got)
	})
	t.Run("a sharded reflector's box says who filters its shard and counts what was dropped", func(t *testing.T) {
		sel := "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
		assert.Empty(t, refl(6).Shard, "an informer of the whole resource shows no shard")
		p.apply(at(6, r(trace.ShardFiltering, trace.Event{Type: "client", Reason: "the apiserver did not apply ShardSelector", Detail: sel})))
		p.apply(at(6, r(trace.ShardDropped, trace.Event{Key: "explore/other", ResourceVersion: "11"})))
		p.apply(at(6, r(trace.ShardDropped, trace.Event{Key: "explore/third", ResourceVersion: "11"})))
		got := refl(6)
		assert.Equal(t, "on the client: the apiserver did not apply ShardSelector ["+sel+"]", got.Shard)
		assert.Equal(t, 2, got.ShardDropped)
		p.apply(at(6, r(trace.ShardFiltering, trace.Event{Type: "server", Reason: "a LIST echoed the selector", Detail: sel})))
		assert.Equal(t, "on the server: a LIST echoed the selector ["+sel+"]", refl(6).Shard)
	})
	t.Run("a watch-list fills the cache, then its stream goes on as the watch: WATCH-LIST, then WATCH, without a WatchStarted", func(t *testing.T) {
		p.apply(at(7, r(trace.ListStarted, trace.Event{Type: "watch-list", ResourceVersion: "11"})))
		assert.Equal(t, "WATCH-LIST", refl(7).Phase)
		p.apply(at(8, r(trace.WatchEvent, trace.Event{Type: "ADDED", Key: "explore/demo", ResourceVersion: "11"})))
		p.apply(at(9, r(trace.Bookmark, trace.Event{ResourceVersion: "12"})))
		assert.Equal(t, "WATCH-LIST", refl(9).Phase, "the initial events are still coming")
		p.apply(at(10, r(trace.Listed, trace.Event{Type: "watch-list", Items: 1, ResourceVersion: "12"})))
		got := refl(10)
		assert.Equal(t, "WATCH", got.Phase)
		assert.Equal(t, "watch-list", got.FilledBy)
		assert.Equal(t, 2, got.Lists, "a watch-list fetches the state, as a LIST does")
		assert.Equal(t, 2, got.Watches, "its stream is the reflector's watch from now on")
		assert.Equal(t, "12", got.RV)
	})
	t.Run("a LIST that came back in pages says so", func(t *testing.T) {
		p.apply(at(11, r(trace.ListStarted, trace.Event{Type: "list", ResourceVersion: "12"})))
		assert.Equal(t, "LIST", refl(11).Phase)
		p.apply(at(12, r(trace.Listed, trace.Event{Type: "list", Items: 900, Paged: true, ResourceVersion: "13"})))
		assert.Equal(t, "paged LIST", refl(12).FilledBy)
		assert.Equal(t, "LIST", refl(12).Phase, "a LIST's watch has not started yet")
		p.apply(at(13, r(trace.WatchStarted, trace.Event{ResourceVersion: "13"})))
		assert.Equal(t, 3, refl(13).Watches)
	})
	t.Run("the queue box keeps the depth the queue reported, and its highest", func(t *testing.T) {
		p.apply(at(7, trace.Event{Stage: trace.DeltaFIFO, Kind: trace.Queued, Source: "foos", QueueLen: 1}))
		p.apply(at(8, trace.Event{Stage: trace.DeltaFIFO, Kind: trace.Queued, Source: "foos", QueueLen: 2}))
		p.apply(at(9, trace.Event{Stage: trace.DeltaFIFO, Kind: trace.Popped, Source: "foos", QueueLen: 1}))
		assert.Equal(t, queueBox{Kind: "deltafifo", Depth: 1, MaxDepth: 2, Queued: 2, Popped: 1}, snap(9).Informers[0].Queue)
	})
	t.Run("a handler's backlog is what was buffered and not yet called", func(t *testing.T) {
		l := func(k trace.Kind, backlog int) trace.Event {
			return trace.Event{Stage: trace.Listener, Kind: k, Source: "enqueueFoo", Type: "add", Key: "explore/demo", Backlog: backlog}
		}
		p.apply(at(10, l(trace.Buffered, 1)))
		p.apply(at(11, l(trace.Buffered, 2)))
		p.apply(at(12, l(trace.Buffered, 3)))
		p.apply(at(13, l(trace.HandlerCalled, 0)))
		h := snap(13).Handlers[0]
		assert.Equal(t, 2, h.Backlog)
		assert.Equal(t, 3, h.HighWater)
		assert.True(t, h.InCall)
		p.apply(at(14, l(trace.PanicRecovered, 0)))
		h = snap(14).Handlers[0]
		assert.False(t, h.InCall)
		assert.Equal(t, 1, h.Panics)
		assert.Equal(t, "foos", h.Informer)
	})
	t.Run("the workqueue counts adds by outcome, the keys in process, and retries still waiting", func(t *testing.T) {
		w := func(k trace.Kind, e trace.Event) trace.Event {
			e.Stage, e.Kind, e.Source = trace.Workqueue, k, "foos"
			return e
		}
		p.apply(at(20, w(trace.Added, trace.Event{Key: "explore/a", Reason: "new", QueueLen: 1})))
		p.apply(at(21, w(trace.Added, trace.Event{Key: "explore/a", Reason: "deduplicated"})))
		p.apply(at(22, w(trace.Got, trace.Event{Key: "explore/a", QueueLen: 0})))
		p.apply(at(23, w(trace.Added, trace.Event{Key: "explore/a", Reason: "dirty"})))
		assert.Equal(t, 1, snap(23).Workers.Busy)
		p.apply(at(24, w(trace.RateLimited, trace.Event{Key: "explore/a", Duration: 10 * time.Millisecond, Requeues: 1})))
		p.apply(at(25, w(trace.AddedAfter, trace.Event{Key: "explore/b", Duration: 100 * time.Millisecond})))
		p.apply(at(26, w(trace.Done, trace.Event{Key: "explore/a"})))
		q := snap(30).Workqueue
		assert.Equal(t, workqueueBox{Depth: 0, Processing: 0, Adds: 1, Deduplicated: 1, Dirty: 1, RateLimited: 1, RetriesWaiting: 2}, q)
		assert.Equal(t, 1, snap(40).Workqueue.RetriesWaiting, "a's retry was due at +34ms")
		assert.Equal(t, 0, snap(200).Workqueue.RetriesWaiting)
		assert.Equal(t, 0, snap(200).Workers.Busy)
	})
	t.Run("workers count reconciles and errors", func(t *testing.T) {
		p.apply(at(300, trace.Event{Stage: trace.Controller, Kind: trace.Reconciled, Source: "foos", Key: "explore/a"}))
		p.apply(at(301, trace.Event{Stage: trace.Controller, Kind: trace.Reconciled, Source: "foos", Key: "explore/a", Reason: "injected"}))
		w := snap(301).Workers
		assert.Equal(t, workersBox{Workers: 2, Reconciles: 2, Errors: 1, LastError: "explore/a: injected"}, w)
	})
	t.Run("the workers box shows the lease's last event and counts its renewals", func(t *testing.T) {
		le := func(kind trace.Kind, e trace.Event) trace.Event {
			e.Stage, e.Kind, e.Source, e.Key = trace.LeaderElection, kind, "explore", "default/foo-controller-explore"
			return e
		}
		p.apply(at(400, le(trace.NewLeaderObserved, trace.Event{Type: "O1", Detail: "explore"})))
		p.apply(at(400, le(trace.LeaseAcquired, trace.Event{Type: "A1", Reason: "created the lease"})))
		p.apply(at(400, le(trace.LeaseRenewed, trace.Event{Type: "R1"})))
		p.apply(at(402, le(trace.LeaseRenewed, trace.Event{Type: "R1", Duration: 2 * time.Second})))
		w := snap(402).Workers
		assert.Equal(t, "explore acquired default/foo-controller-explore (A1): created the lease", w.Lease)
		assert.Equal(t, 2, w.Renewals)
	})
}

func TestHubRing(t *testing.T) {
	h := newHub(layout{}, 4, nil)
	for i := range 6 {
		h.Record(at(i, trace.Event{Stage: trace.Workqueue, Kind: trace.Added, Key: string(rune('a' + i))}))
	}
	t.Run("the ring keeps the newest events and says how many a reader missed", func(t *testing.T) {
		got, missed := h.since(0, 100)
		assert.Equal(t, uint64(2), missed)
		require.Len(t, got, 4)
		assert.Equal(t, uint64(3), got[0].Seq)
		assert.Equal(t, "c", got[0].Key)
		assert.Equal(t, "f", got[3].Key)
	})
	t.Run("a reader that kept up misses nothing", func(t *testing.T) {
		got, missed := h.since(4, 100)
		assert.Zero(t, missed)
		assert.Len(t, got, 2)
	})
	t.Run("limit bounds a batch", func(t *testing.T) {
		got, _ := h.since(2, 3)
		assert.Len(t, got, 3)
	})
	t.Run("Record never waits for a stream that does not read", func(t *testing.T) {
		_, cancel := h.subscribe()
		defer cancel()
		for range 1000 {
			h.Record(trace.Event{Stage: trace.Workqueue, Kind: trace.Added})
		}
		assert.Equal(t, uint64(1006), h.newest())
	})
}

func TestJourneyLightsTheBoxesInOrder(t *testing.T) {
	h := newHub(layout{Informers: []string{"foos", "deployments"}}, 100, nil)
	// The Foo's Deployment is named like it (explore/demo), as sample-controller names it.
	dep := func(stage trace.Stage, kind trace.Kind) trace.Event {
		return trace.Event{Stage: stage, Kind: kind, Source: "deployments", Key: "explore/demo"}
	}
	ev := []trace.Event{
		{Stage: trace.Reflector, Kind: trace.WatchEvent, Source: "foos", Key: "explore/demo", Type: "ADDED"},
		{Stage: trace.DeltaFIFO, Kind: trace.Queued, Source: "foos", Key: "explore/demo"},
		{Stage: trace.Reflector, Kind: trace.WatchEvent, Source: "deployments", Key: "explore/other"},
		{Stage: trace.DeltaFIFO, Kind: trace.Popped, Source: "foos", Key: "explore/demo"},
		{Stage: trace.Informer, Kind: trace.Applied, Source: "foos", Key: "explore/demo"},
		{Stage: trace.Listener, Kind: trace.HandlerCalled, Source: "enqueueFoo", Informer: "foos", Key: "explore/demo"},
		{Stage: trace.Workqueue, Kind: trace.Added, Source: "foos", Key: "explore/demo", Reason: "new"},
		{Stage: trace.Listener, Kind: trace.HandlerReturned, Source: "enqueueFoo", Informer: "foos", Key: "explore/demo"},
		dep(trace.Reflector, trace.WatchEvent),
		{Stage: trace.Workqueue, Kind: trace.Got, Source: "foos", Key: "explore/demo"},
		{Stage: trace.Controller, Kind: trace.Reconciled, Source: "foos", Key: "explore/demo"},
		dep(trace.Reflector, trace.WatchEvent),
		dep(trace.DeltaFIFO, trace.Queued),
		dep(trace.DeltaFIFO, trace.Popped),
		dep(trace.Informer, trace.Applied),
		{Stage: trace.Listener, Kind: trace.HandlerCalled, Source: "handleDeployment", Informer: "deployments", Key: "explore/demo"},
		dep(trace.Controller, trace.Mapped),
		{Stage: trace.Workqueue, Kind: trace.Added, Source: "foos", Key: "explore/demo", Reason: "new"},
	}
	ev[16].Detail = "explore/demo"
	for i, e := range ev {
		h.Record(at(i, e))
	}
	t.Run("a Foo's journey passes reflector, queue, indexer, handler, workqueue, and a worker from the moment it got the key", func(t *testing.T) {
		events, boxes := h.journey("foos", "explore/demo")
		assert.Equal(t, []string{"reflector:foos", "queue:foos", "indexer:foos", "handler:enqueueFoo", "workqueue", "workers"}, boxes,
			"none of the same-named Deployment's boxes")
		assert.Len(t, events, 11, "its own 9, the Deployment's mapping into its key, the add that follows")
		assert.Equal(t, uint64(1), events[0].Seq)
		assert.Equal(t, trace.Mapped, events[9].Kind)
	})
	t.Run("its Deployment's journey passes the deployments boxes and the Foo's key once it is mapped to it", func(t *testing.T) {
		events, boxes := h.journey("deployments", "explore/demo")
		assert.Equal(t, []string{"reflector:deployments", "queue:deployments", "indexer:deployments", "handler:handleDeployment", "workqueue"}, boxes,
			"not the Foo's boxes, not the workers that synced the Foo before the Deployment changed")
		require.Len(t, events, 8)
		assert.Equal(t, trace.Mapped, events[6].Kind)
	})
	t.Run("a work key's journey is the workqueue's and the workers'", func(t *testing.T) {
		_, boxes := h.journey("", "explore/demo")
		assert.Equal(t, []string{"workqueue", "workers"}, boxes)
	})
	t.Run("an unknown key has no journey", func(t *testing.T) {
		events, boxes := h.journey("foos", "nowhere/none")
		assert.Empty(t, events)
		assert.Empty(t, boxes)
	})
}

func TestJourneyHoldsTheLockOnlyToCopyAChunk(t *testing.T) {
	// demoEvery: one event in demoEvery is about the followed key.
	const demoEvery = 100
	fill := func(h *hub, n int) {
		for i := range n {
			key := "explore/other"
			if i%demoEvery == 0 {
				key = "explore/demo"
			}
			h.Record(at(i, added(key)))
		}
	}
	// free reports whether mu is free, taking it for no longer than the check.
	free := func(h *hub) bool {
		if !h.mu.TryLock() {
			return false
		}
		h.mu.Unlock()
		return true
	}

	t.Run("Record runs between the chunks of a journey, and the journey is the one a quiet ring gives", func(t *testing.T) {
		h := newHub(layout{}, 3*journeyChunk, nil)
		fill(h, 3*journeyChunk)
		want, wantBoxes := h.journey("", "explore/demo")
		require.Len(t, want, (3*journeyChunk+demoEvery-1)/demoEvery)

		var chunks, held int
		h.afterChunk = func() {
			chunks++
			if !free(h) {
				held++
				return
			}
			// The pipeline goes on mid-walk: an event about the followed key itself.
			h.Record(added("explore/demo"))
		}
		got, gotBoxes := h.journey("", "explore/demo")
		assert.Equal(t, 3, chunks, "a ring of three chunks is read in three")
		assert.Zero(t, held, "mu was free each time a chunk had been copied")
		assert.Equal(t, uint64(3*journeyChunk+3), h.newest(), "a Record ran after each chunk")
		assert.Equal(t, want, got, "the walk ends at the newest event when it began: the events recorded meanwhile are not in it")
		assert.Equal(t, wantBoxes, gotBoxes)
	})
	t.Run("events that leave the ring during the walk are left out, never read from the slot that now holds a newer one", func(t *testing.T) {
		h := newHub(layout{}, 2*journeyChunk, nil)
		fill(h, 2*journeyChunk)
		first := true
		h.afterChunk = func() {
			if !first || !free(h) {
				return
			}
			first = false
			// A burst replaces the whole ring while the journey reads its first chunk.
			for range 2 * journeyChunk {
				h.Record(added("explore/other"))
			}
		}
		got, boxes := h.journey("", "explore/demo")
		require.Len(t, got, (journeyChunk+demoEvery-1)/demoEvery, "only the first chunk's events about the key")
		for _, e := range got {
			assert.LessOrEqual(t, e.Seq, uint64(journeyChunk))
			assert.Equal(t, "explore/demo", e.Key)
		}
		assert.Equal(t, []string{"workqueue"}, boxes)
	})
}

func TestAResetHubForgetsItsEventsBoxesAndPlots(t *testing.T) {
	h := testHub(10)
	h.Record(at(0, trace.Event{Stage: trace.RealFIFO, Kind: trace.Queued, Source: "foos", Key: "explore/a", QueueLen: 1}))
	h.Record(at(1, trace.Event{Stage: trace.Listener, Kind: trace.HandlerCalled, Source: "enqueueFoo", Informer: "foos", Key: "explore/a"}))
	plotted, _ := h.plotsSince(0)
	require.NotEmpty(t, plotted.Series)

	h.reset()
	events, missed := h.since(0, 100)
	assert.Empty(t, events)
	assert.Zero(t, missed, "forgotten, not missed")
	j, _ := h.journey("foos", "explore/a")
	assert.Empty(t, j, "a journey sees nothing before the reset")
	s := h.snapshot()
	assert.Zero(t, s.Handlers[0].Calls)
	assert.Equal(t, "—", s.Informers[0].Queue.Kind, "the boxes are fresh")
	plotted, gen := h.plotsSince(0)
	assert.Empty(t, plotted.Series)
	assert.Equal(t, uint64(1), gen)

	h.Record(at(2, trace.Event{Stage: trace.Workqueue, Kind: trace.Added, Source: "foos", Key: "explore/b", Reason: "new", QueueLen: 1}))
	events, _, g := h.sinceGen(0, 0, 100)
	assert.Equal(t, uint64(1), g)
	require.Len(t, events, 1)
	assert.Equal(t, uint64(3), events[0].Seq)
	events, _, _ = h.sinceGen(3, 1, 100)
	assert.Empty(t, events, "a stream of this generation resumes where it was")
}

func TestTheSnapshotCountsRetriesDownOnTheHubsClock(t *testing.T) {
	h := testHub(10)
	now := t0
	h.clock = func() time.Time { return now }
	h.Record(at(0, trace.Event{Stage: trace.Workqueue, Kind: trace.RateLimited, Source: "foos", Key: "explore/a", Duration: 5 * time.Millisecond}))
	assert.Equal(t, 1, h.snapshot().Workqueue.RetriesWaiting)
	now = t0.Add(5 * time.Millisecond)
	assert.Equal(t, 0, h.snapshot().Workqueue.RetriesWaiting, "due at 5ms on the hub's clock, whatever the wall clock says")
}
