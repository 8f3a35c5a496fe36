package reflector

import (
	"fmt"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/trace"
)

// traceOf runs the script and returns the reflector's trace as sentences. A backoff's
// duration is jittered, so it is checked to be positive and then left out.
func traceOf(t *testing.T, opts Options[cmT], script ...step) []string {
	t.Helper()
	var rec trace.Recorder
	opts.Name = "configmaps"
	opts.Tracer = trace.New(rec.Record)
	lw := newScriptedLW(t, script...)
	r, err := NewReflector(lw, &recordingStore{}, opts)
	require.NoError(t, err)
	runUntilExhausted(t, r, lw)
	var out []string
	for _, e := range rec.Events() {
		require.Equal(t, trace.Reflector, e.Stage)
		require.Equal(t, "configmaps", e.Source)
		if e.Kind == trace.Backoff {
			assert.Positive(t, e.Duration, "a backoff waits")
			e.Duration = 0
		}
		out = append(out, e.String())
	}
	return out
}

func TestTheReflectorTracesListsWatchesRelistsAndBackoffs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := traceOf(t, Options[cmT]{InitialList: PagedList},
			listStep("10", cm("a", "9")),
			watchClose(0, added(cm("b", "11")), bookmarked(bookmark("12")), errorEvent(errExpired())),
			listErr(errExpired()),
			listStep("20"),
			watchErr(errTooManyRequests()),
			watchErr(fmt.Errorf("dial tcp 127.0.0.1:6443: %w", syscall.ECONNREFUSED)),
			watchClose(0),
			listStep("30"),
			watchHold(modified(cm("a", "31"))),
		)
		gone := "410 Gone: the resource version is too old (compacted in etcd, or gone from the watch cache)"
		assert.Equal(t, []string{
			`list started (list) at rv="0"`,
			`listed 1 items rv=10`,
			`watch started rv=10`,
			`watch event ADDED ns/b rv=11`,
			`bookmark rv=12`,
			`watch ended: ` + gone + ` (next from rv=12)`,
			`relist: ` + gone,
			`backoff 0.000ms: before the relist`,
			`list started (list) at rv="12"`,
			`relist: ` + gone + `; listing again at the most recent`,
			`list started (list) at rv=""`,
			`listed 0 items rv=20`,
			`watch started rv=20`,
			`backoff 0.000ms: 429 Too Many Requests`,
			`watch started rv=20`,
			`backoff 0.000ms: connection refused: the apiserver is unreachable`,
			`watch started rv=20`,
			`watch ended: very short watch: closed within a second with no events (next from rv=20)`,
			`relist: very short watch: closed within a second with no events`,
			`backoff 0.000ms: before the relist`,
			`list started (list) at rv="20"`,
			`listed 0 items rv=30`,
			`watch started rv=30`,
			`watch event MODIFIED ns/a rv=31`,
			`watch ended: the context ended (next from rv=31)`,
		}, got)
	})
}

func TestTheReflectorTracesEachResyncTickAndWhetherItResynced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ticks := 0
		got := traceOf(t, Options[cmT]{
			InitialList:  PagedList,
			ResyncPeriod: time.Minute,
			ShouldResync: func() bool { ticks++; return ticks == 2 },
		},
			listStep("10"),
			watchClose(150*time.Second),
			watchHold(),
		)
		assert.Equal(t, []string{
			`list started (list) at rv="0"`,
			`listed 0 items rv=10`,
			`watch started rv=10`,
			`resync tick: skipped: no handler is due`,
			`resync tick: resyncing the store`,
			`watch ended: the stream ended without an error (the server's timeout, or the connection closed on the way) (next from rv=10)`,
			`watch started rv=10`,
			`watch ended: the context ended (next from rv=10)`,
		}, got)
	})
}

func TestTheReflectorTracesAWatchListAndItsRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := traceOf(t, Options[cmT]{InitialList: WatchList},
			watchClose(2*time.Second, added(cm("a", "5"))), // closed before the end bookmark (S4)
			watchHold(added(cm("a", "5")), added(cm("b", "6")), bookmarked(initialEventsEnd("9")), modified(cm("a", "10"))),
		)
		assert.Equal(t, []string{
			`list started (watch-list) at rv=""`,
			`watch event ADDED ns/a rv=5`,
			`watch ended: the watch-list stream closed before its initial events ended; starting over`,
			`backoff 0.000ms: before the next watch-list`,
			`list started (watch-list) at rv=""`,
			`watch event ADDED ns/a rv=5`,
			`watch event ADDED ns/b rv=6`,
			`bookmark rv=9`,
			`listed 2 items rv=9 (watch-list)`,
			`watch event MODIFIED ns/a rv=10`,
			`watch ended: the context ended (next from rv=10)`,
		}, got)
	})
}
