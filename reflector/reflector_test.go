package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeinternals/informers/internal/testrig/testlog"
)

func TestNewReflectorRejectsBadInput(t *testing.T) {
	lw := newScriptedLW(t)
	store := &recordingStore{}
	var nilStore *recordingStore
	tests := []struct {
		name  string
		lw    ListerWatcher[cmT]
		store Store[cmT]
		opts  Options[cmT]
	}{
		{"a nil ListerWatcher is rejected", nil, store, Options[cmT]{}},
		{"a nil Store is rejected", lw, nil, Options[cmT]{}},
		{"a typed nil Store is rejected", lw, nilStore, Options[cmT]{}},
		{"a negative ResyncPeriod is rejected", lw, store, Options[cmT]{ResyncPeriod: -time.Second}},
		{"a negative PageSize is rejected", lw, store, Options[cmT]{PageSize: -1}},
		{"a negative MinWatchTimeout is rejected", lw, store, Options[cmT]{MinWatchTimeout: -time.Second}},
		{"a backoff factor below 1 is rejected", lw, store, Options[cmT]{Backoff: BackoffOptions{Factor: 0.5}}},
		{"a negative backoff jitter is rejected", lw, store, Options[cmT]{Backoff: BackoffOptions{Jitter: -1}}},
		{"an unknown InitialList is rejected", lw, store, Options[cmT]{InitialList: PagedList + 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewReflector(tt.lw, tt.store, tt.opts)
			require.ErrorIs(t, err, ErrInvalidOptions)
			assert.Nil(t, r)
		})
	}
}

func TestRunStopsEveryGoroutineWhenCancelled(t *testing.T) {
	// synctest.Test fails with a deadlock if any goroutine of the bubble (the
	// watch stream, the resync timer, a backoff timer) is still blocked after Run
	// returned; so each case proves that Run leaves nothing behind.
	tests := []struct {
		name   string
		opts   Options[cmT]
		script []step
		// cancelAfter is how long after the start ctx is cancelled.
		cancelAfter time.Duration
	}{
		{
			name:        "cancelling during a watch with resync on stops the watch and the resync timer",
			opts:        Options[cmT]{InitialList: PagedList, ResyncPeriod: time.Second},
			script:      []step{listStep("1"), watchHold()},
			cancelAfter: 10 * time.Second,
		},
		{
			name:        "cancelling during a backoff stops the wait",
			opts:        Options[cmT]{InitialList: PagedList},
			script:      []step{listErr(errInternal()), listErr(errInternal()), listErr(errInternal())},
			cancelAfter: time.Second,
		},
		{
			name:        "cancelling during a LIST aborts it",
			opts:        Options[cmT]{InitialList: PagedList},
			script:      []step{}, // the first List blocks until ctx ends
			cancelAfter: time.Minute,
		},
		{
			name:        "cancelling during a watch-list stream stops it",
			opts:        Options[cmT]{InitialList: WatchList},
			script:      []step{watchHold(added(cm("a", "1")))},
			cancelAfter: 25 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lw := newScriptedLW(t, tt.script...)
				lw.lenient = true // the run is cut short, wherever it is
				r, err := NewReflector(lw, &recordingStore{}, tt.opts)
				require.NoError(t, err)
				ctx, cancel := context.WithTimeout(t.Context(), tt.cancelAfter)
				defer cancel()
				start := time.Now()
				r.Run(ctx)
				assert.Equal(t, tt.cancelAfter, time.Since(start), "Run returns as soon as ctx ends")
			})
		})
	}
}

func TestRunBacksOffBetweenFailedCycles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := newScriptedLW(t,
			listErr(errInternal()),
			listErr(errInternal()),
			listErr(errInternal()),
			listStep("5"),
			watchErr(errTooManyRequests()),
			watchHold(),
		)
		r, err := NewReflector(lw, &recordingStore{}, Options[cmT]{InitialList: PagedList})
		require.NoError(t, err)
		runUntilExhausted(t, r, lw)

		calls := lw.RawCalls()
		require.Len(t, calls, 6)
		gap := func(i int) time.Duration { return calls[i].at.Sub(calls[i-1].at) }
		// 800ms, 1.6s, 3.2s, 6.4s, each plus up to 100% jitter.
		for i, base := range map[int]time.Duration{1: 800 * time.Millisecond, 2: 1600 * time.Millisecond, 3: 3200 * time.Millisecond, 5: 6400 * time.Millisecond} {
			assert.GreaterOrEqual(t, gap(i), base, "gap before call %d", i)
			assert.Less(t, gap(i), 2*base, "gap before call %d", i)
		}
		assert.Zero(t, gap(4), "a successful list is followed at once by the watch")
	})
}

func TestBackoffResetsAfterAQuietPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A watch that ends with 410 after 3 minutes: the relist after it backs off
		// from 800ms again, although earlier failures had raised the delay.
		lw := newScriptedLW(t,
			listErr(errInternal()),
			listErr(errInternal()),
			listErr(errInternal()),
			listStep("5"),
			watchClose(3*time.Minute),
			watchClose(0, errorEvent(errExpired())),
			listStep("6"),
			watchHold(),
		)
		r, err := NewReflector(lw, &recordingStore{}, Options[cmT]{InitialList: PagedList})
		require.NoError(t, err)
		runUntilExhausted(t, r, lw)
		calls := lw.RawCalls()
		require.Len(t, calls, 8)
		gap := calls[6].at.Sub(calls[5].at)
		assert.GreaterOrEqual(t, gap, 800*time.Millisecond)
		assert.Less(t, gap, 1600*time.Millisecond)
	})
}

func TestWatchRequestOptions(t *testing.T) {
	tests := []struct {
		name            string
		minWatchTimeout time.Duration
		wantMin         int64
	}{
		{"the watch timeout is random in [5m, 10m) by default", 0, 300},
		{"a MinWatchTimeout below 5 minutes is ignored", time.Minute, 300},
		{"a MinWatchTimeout above 5 minutes raises the range to [min, 2*min)", 20 * time.Minute, 1200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				script := []step{listStep("1")}
				for range 20 {
					script = append(script, watchClose(2*time.Second))
				}
				script = append(script, watchHold())
				lw := newScriptedLW(t, script...)
				r, err := NewReflector(lw, &recordingStore{}, Options[cmT]{InitialList: PagedList, MinWatchTimeout: tt.minWatchTimeout})
				require.NoError(t, err)
				runUntilExhausted(t, r, lw)
				seen := map[int64]bool{}
				for _, c := range lw.RawCalls()[1:] {
					require.NotNil(t, c.opts.TimeoutSeconds)
					assert.GreaterOrEqual(t, *c.opts.TimeoutSeconds, tt.wantMin)
					assert.Less(t, *c.opts.TimeoutSeconds, 2*tt.wantMin)
					assert.True(t, c.opts.AllowWatchBookmarks, "bookmarks are requested")
					seen[*c.opts.TimeoutSeconds] = true
				}
				assert.Greater(t, len(seen), 1, "the timeout is random, not fixed")
			})
		})
	}
}

func TestResync(t *testing.T) {
	tests := []struct {
		name         string
		shouldResync func() bool
		wantResyncs  int
	}{
		{"Resync is called every ResyncPeriod while the watch runs", nil, 3},
		{"ShouldResync returning false skips the Resync", func() bool { return false }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lw := newScriptedLW(t, listStep("1"), watchHold())
				store := &recordingStore{}
				r, err := NewReflector(lw, store, Options[cmT]{InitialList: PagedList, ResyncPeriod: 30 * time.Second, ShouldResync: tt.shouldResync})
				require.NoError(t, err)
				ctx, cancel := context.WithTimeout(t.Context(), 95*time.Second)
				defer cancel()
				r.Run(ctx)
				assert.Equal(t, tt.wantResyncs, store.Resyncs())
			})
		})
	}
}

func TestResyncErrorForcesARelist(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The first watch would stay open for an hour; the failed resync ends it.
		lw := newScriptedLW(t, listStep("1"), watchClose(time.Hour), listStep("2"), watchHold())
		store := &recordingStore{resyncErr: errors.New("queue closed")}
		var handled []error
		r, err := NewReflector(lw, store, Options[cmT]{
			InitialList:       PagedList,
			ResyncPeriod:      time.Minute,
			WatchErrorHandler: func(_ context.Context, _ *Reflector[cmT], err error) { handled = append(handled, err) },
		})
		require.NoError(t, err)
		runUntilExhausted(t, r, lw)
		assert.Equal(t, []string{`list rv="0" limit=500`, `watch rv="1"`, `list rv="1"`, `watch rv="2"`}, lw.Calls())
		require.Len(t, handled, 1)
		assert.ErrorContains(t, handled[0], "resync: queue closed")
	})
}

func TestWatchErrorHandlerReceivesTheErrorThatEndedEachCycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := newScriptedLW(t,
			listStep("1"),
			watchClose(0, errorEvent(apierrors.NewForbidden(cmResource, "", errors.New("no RBAC")))),
			listStep("2"),
			watchClose(0),
			listStep("3"),
			watchHold(),
		)
		var mu sync.Mutex
		var got []error
		r, err := NewReflector(lw, &recordingStore{}, Options[cmT]{
			InitialList: PagedList,
			WatchErrorHandler: func(_ context.Context, r *Reflector[cmT], err error) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, err)
			},
		})
		require.NoError(t, err)
		runUntilExhausted(t, r, lw)
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, got, 2)
		assert.True(t, apierrors.IsForbidden(got[0]), "an Error event becomes its API status error, got %v", got[0])
		assert.ErrorIs(t, got[1], ErrVeryShortWatch)
	})
}

func TestDefaultWatchErrorHandlerLogLevels(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string // "" = nothing logged
	}{
		{"an expired RV costs a relist and is logged at info", errExpired(), "INFO watch ended with 410 Gone (resource version expired); relisting"},
		{"a clean EOF is not logged", fmt.Errorf("watch: %w", io.EOF), ""},
		{"any other error is a warning", errInternal(), "WARN list/watch failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &testlog.Recorder{}
			r, err := NewReflector(newScriptedLW(t), &recordingStore{}, Options[cmT]{InitialList: PagedList, Logger: slog.New(logs)})
			require.NoError(t, err)
			DefaultWatchErrorHandler(t.Context(), r, tt.err)
			all := logs.Lines("")
			if tt.want == "" {
				assert.Empty(t, all)
				return
			}
			require.Len(t, all, 1)
			assert.Contains(t, all[0], tt.want)
		})
	}
}

func TestStoreErrorsOnWatchEventsAreLoggedAndTheWatchGoesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := newScriptedLW(t, listStep("1"), watchHold(added(cm("a", "2")), modified(cm("a", "3"))))
		logs := &testlog.Recorder{}
		store := &recordingStore{addErr: errors.New("rejected")}
		r, err := NewReflector(lw, store, Options[cmT]{InitialList: PagedList, Logger: slog.New(logs)})
		require.NoError(t, err)
		runUntilExhausted(t, r, lw)
		assert.Equal(t, []string{"replace [] rv=1", "add a@2", "update a@3"}, store.Ops())
		assert.Len(t, logs.Lines("store rejected a watch event"), 1)
		assert.Equal(t, "3", r.LastSyncResourceVersion())
	})
}

func TestWatchListWarnsWhileTheEndBookmarkIsMissing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		warnings := missingBookmarkWarnings(t, newScriptedLW(t, watchHold()))
		assert.Len(t, warnings, 3, "one warning per 10s")
	})
}

// missingBookmarkWarnings runs a watch-list reflector on lw for 35s (of synctest's
// clock) and returns its warnings about the missing end bookmark.
func missingBookmarkWarnings(t *testing.T, lw *scriptedLW) []string {
	logs := &testlog.Recorder{}
	r, err := NewReflector(lw, &recordingStore{}, Options[cmT]{InitialList: WatchList, Logger: slog.New(logs)})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 35*time.Second)
	defer cancel()
	r.Run(ctx)
	return logs.Lines("awaiting the bookmark that ends the initial events")
}

func TestWatchListWarnsOnlyOnceTheStreamHasBeenSilentForAnInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// An event every second until 5s, then silence: the tick at 10s finds the
		// last event 5s old (no warning), the ticks at 20s and 30s find it 15s and
		// 25s old.
		events := make([]Event[cmT], 5)
		for i := range events {
			events[i] = added(cm(fmt.Sprintf("o%d", i), fmt.Sprint(i+2)))
		}
		hold := watchHold(events...)
		hold.every = time.Second
		warnings := missingBookmarkWarnings(t, newScriptedLW(t, hold))
		require.Len(t, warnings, 2, "the ticks at 20s and 30s")
		assert.Contains(t, warnings[0], "sinceLastEvent=15s")
		assert.Contains(t, warnings[1], "sinceLastEvent=25s")
	})
}

func TestRunRefusesASecondConcurrentRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := newScriptedLW(t, listStep("1"), watchHold())
		logs := &testlog.Recorder{}
		r, err := NewReflector(lw, &recordingStore{}, Options[cmT]{InitialList: PagedList, Logger: slog.New(logs)})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		// Goroutine owned by the test: Run, which exits on cancel below.
		go func() {
			defer close(done)
			r.Run(ctx)
		}()
		<-lw.exhausted
		r.Run(ctx) // returns at once
		assert.Len(t, logs.Lines("already running"), 1)
		cancel()
		<-done
		assert.Equal(t, []string{`list rv="0" limit=500`, `watch rv="1"`}, lw.Calls())
	})
}

// transformingStore changes every object it is given in place, as a queue's
// transform may: it clears the resourceVersion, the name and the annotations.
type transformingStore struct{ recordingStore }

func strip(o cmT) { o.ResourceVersion, o.Name, o.Annotations = "", "", nil }

func (s *transformingStore) Add(o cmT) error {
	defer strip(o)
	return s.recordingStore.Add(o)
}

func (s *transformingStore) Update(o cmT) error {
	defer strip(o)
	return s.recordingStore.Update(o)
}

func (s *transformingStore) Delete(o cmT) error {
	defer strip(o)
	return s.recordingStore.Delete(o)
}

// The reflector reads what it needs from a watch event (its resourceVersion, its key)
// before handing the object to the store: from then on the store owns it, and a
// transform may change it in place (client-go's TestTransformingInformer clears the
// resourceVersion) while handlers on other goroutines may already read it.
//
// client-go: tools/cache/reflector.go handleAnyWatch (reads the RV before the store call)
func TestTheResourceVersionIsReadBeforeTheStoreTakesTheObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := newScriptedLW(t,
			listStep("1"),
			watchClose(0, added(cm("a", "2")), modified(cm("a", "3")), deleted(cm("a", "4"))),
			watchHold(added(cm("b", "5"))),
		)
		logs := &testlog.Recorder{}
		store := &transformingStore{recordingStore{addErr: errors.New("rejected")}}
		r, err := NewReflector(lw, store, Options[cmT]{InitialList: PagedList, Logger: slog.New(logs)})
		require.NoError(t, err)
		runUntilExhausted(t, r, lw)
		assert.Equal(t, []string{`list rv="0" limit=500`, `watch rv="1"`, `watch rv="4"`}, lw.Calls(),
			"the re-watch resumes at the last event's RV, not from scratch")
		assert.Equal(t, "5", r.LastSyncResourceVersion())
		rejected := logs.Lines("store rejected a watch event")
		require.Len(t, rejected, 2)
		assert.Contains(t, rejected[0], "key=ns/a", "the log names the object as the server sent it")
	})
}
