package reflector

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// handWatched is a ListerWatcher whose LIST answers at once and whose every watch is
// a FakeWatch handed to the test, which plays the server on it.
func handWatched(watches chan<- *FakeWatch[cmT], watchErr func() error) ListWatch[cmT] {
	return ListWatch[cmT]{
		ListFunc: func(context.Context, metav1.ListOptions) (ListResult[cmT], error) {
			return ListResult[cmT]{ResourceVersion: "1"}, nil
		},
		WatchFunc: func(_ context.Context, opts metav1.ListOptions) (Watch[cmT], error) {
			if watchErr != nil {
				if err := watchErr(); err != nil {
					return nil, err
				}
			}
			w := NewFakeWatch[cmT]()
			if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
				// Goroutine owned by the fake server: the watch-list's state (empty)
				// ends at once; it exits once the bookmark is taken or the watch stopped.
				go w.Bookmark(initialEventsEnd("1"))
			}
			watches <- w
			return w, nil
		},
	}
}

// runReflector runs r until the returned stop is called; stop waits for Run to return.
func runReflector(t *testing.T, r *Reflector[cmT]) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	// Goroutine owned by this test: Run, which exits when stop cancels ctx.
	go func() { defer close(done); r.Run(ctx) }()
	return func() { cancel(); <-done }
}

func TestWatchActivityFollowsTheWatchFromItsOpeningToRunsReturn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		watches := make(chan *FakeWatch[cmT], 2)
		r, err := NewReflector(handWatched(watches, nil), &recordingStore{}, Options[cmT]{InitialList: PagedList})
		require.NoError(t, err)
		require.Zero(t, r.WatchActivity(), "nothing before Run")

		start := time.Now()
		stop := runReflector(t, r)
		w := <-watches
		synctest.Wait()
		a := r.WatchActivity()
		assert.True(t, a.Open, "the server answered the watch")
		assert.Equal(t, start, a.Since)
		assert.Equal(t, start, a.LastList, "the LIST replaced the store")
		assert.True(t, a.LastEvent.IsZero(), "no event yet")
		assert.Equal(t, start, a.LastActive())

		time.Sleep(30 * time.Second)
		w.Modify(cm("a", "2"))
		synctest.Wait()
		assert.Equal(t, start.Add(30*time.Second), r.WatchActivity().LastEvent, "an event")

		time.Sleep(30 * time.Second)
		w.Bookmark(bookmark("3"))
		synctest.Wait()
		a = r.WatchActivity()
		assert.Equal(t, start.Add(time.Minute), a.LastEvent, "a bookmark counts as much as an event")
		assert.Equal(t, start.Add(time.Minute), a.LastActive())

		time.Sleep(10 * time.Second)
		w.Close() // the server's timeout: W6, a new watch at once
		<-watches
		synctest.Wait()
		a = r.WatchActivity()
		assert.True(t, a.Open)
		assert.Equal(t, start.Add(70*time.Second), a.Since, "the new watch opened")
		assert.Equal(t, start.Add(70*time.Second), a.LastActive(), "a watch that just opened has not been silent yet")

		time.Sleep(5 * time.Second)
		stop()
		a = r.WatchActivity()
		assert.False(t, a.Open, "no watch once Run returned")
		assert.Equal(t, start.Add(75*time.Second), a.Since)
		assert.Equal(t, start.Add(time.Minute), a.LastActive(), "a closed watch is no sign of life")
	})
}

func TestWatchActivityIsClosedWhileTheWatchIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		watches := make(chan *FakeWatch[cmT], 2)
		var refusing atomic.Bool
		refuse := func() error {
			if refusing.Load() {
				return errTooManyRequests() // W2: back off, then watch again
			}
			return nil
		}
		r, err := NewReflector(handWatched(watches, refuse), &recordingStore{}, Options[cmT]{InitialList: PagedList})
		require.NoError(t, err)
		start := time.Now()
		stop := runReflector(t, r)
		defer stop()
		w := <-watches
		synctest.Wait()

		time.Sleep(10 * time.Second)
		refusing.Store(true)
		w.Close()
		synctest.Wait()
		a := r.WatchActivity()
		assert.False(t, a.Open, "refused: no watch open")
		assert.Equal(t, start.Add(10*time.Second), a.Since, "since the last one ended")
		assert.Equal(t, start, a.LastActive(), "the LIST and the opening of the watch, nothing since")

		time.Sleep(5 * time.Minute) // one backoff after another, every request refused
		a = r.WatchActivity()
		assert.False(t, a.Open)
		assert.Equal(t, start, a.LastActive(), "a refused request is no sign of life")

		refusing.Store(false)
		<-watches // after the backoff in progress
		synctest.Wait()
		assert.True(t, r.WatchActivity().Open, "accepted at last")
	})
}

// A watch-list's stream is open from the start of the initial events; its end
// bookmark is both an event and a list, and the stream stays open for the watch loop.
func TestWatchActivityOfAWatchList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		watches := make(chan *FakeWatch[cmT], 1)
		r, err := NewReflector(handWatched(watches, nil), &bookmarkingStore{}, Options[cmT]{})
		require.NoError(t, err)
		start := time.Now()
		stop := runReflector(t, r)
		defer stop()
		<-watches
		synctest.Wait()
		a := r.WatchActivity()
		assert.True(t, a.Open, "the watch-list's stream, carried on by the watch loop")
		assert.Equal(t, start, a.Since)
		assert.Equal(t, start, a.LastEvent, "the end bookmark")
		assert.Equal(t, start, a.LastList, "the watch-list replaced the store")
	})
}

func TestLastActiveIsTheLatestSignOfLifeOfAnOpenWatch(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, c := range []struct {
		name string
		a    WatchActivity
		want time.Time
	}{
		{"nothing yet", WatchActivity{}, time.Time{}},
		{"the last event", WatchActivity{Open: true, Since: at(1), LastList: at(1), LastEvent: at(5)}, at(5)},
		{"a watch opened after the last event", WatchActivity{Open: true, Since: at(9), LastList: at(1), LastEvent: at(5)}, at(9)},
		{"a watch that ended is no sign of life", WatchActivity{Open: false, Since: at(9), LastList: at(1), LastEvent: at(5)}, at(5)},
		{"a relist after the last event", WatchActivity{Open: false, Since: at(9), LastList: at(12), LastEvent: at(5)}, at(12)},
	} {
		assert.Equal(t, c.want, c.a.LastActive(), c.name)
	}
}

// Tracking the watch's activity allocates nothing per event: without metrics, a
// watch event costs the reflector no allocation at all.
func TestWatchActivityAddsNoAllocationPerEvent(t *testing.T) {
	watches := make(chan *FakeWatch[cmT], 1)
	r, err := NewReflector(handWatched(watches, nil), &countingStore{}, Options[cmT]{InitialList: PagedList})
	require.NoError(t, err)
	stop := runReflector(t, r)
	defer stop()
	w := <-watches
	obj := cmUID("a", "2")
	for range 100 { // warm up: every path taken once
		w.Modify(obj)
	}
	allocs := testing.AllocsPerRun(1000, func() { w.Modify(obj) })
	assert.Zero(t, allocs, "allocations per event")
	assert.False(t, r.WatchActivity().LastEvent.IsZero(), "the events were stamped")
}
