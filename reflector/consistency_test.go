package reflector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeinternals/informers/internal/testrig/testlog"
)

// cmUID is cm with a UID, as every object from an API server has.
func cmUID(name, rv string) cmT {
	o := cm(name, rv)
	o.UID = types.UID("uid-" + name)
	return o
}

// runWatchListCheck runs a reflector with CheckWatchList over script until every
// goroutine waits (the watch-list's stream is held open), and returns what the
// scripted server was asked, what the store got, the differences reported, and the
// logs.
func runWatchListCheck(t *testing.T, script ...step) (calls, ops []string, found []*InconsistencyError, logs *testlog.Recorder) {
	t.Helper()
	lw := newScriptedLW(t, script...)
	lw.lenient = true // the watch-list's stream stays open after the script
	logs = &testlog.Recorder{}
	store := &recordingStore{}
	r, err := NewReflector(lw, store, Options[cmT]{
		Logger: slog.New(logs), CheckWatchList: true,
		OnInconsistency: func(err *InconsistencyError) { found = append(found, err) },
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	// Goroutine owned by this helper: Run, which exits when ctx is cancelled below.
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	synctest.Wait()
	cancel()
	<-done
	return lw.Calls(), store.Ops(), found, logs
}

func TestWatchListCheckListsAtTheBookmarkRVAndKeepsAConsistentStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls, ops, found, _ := runWatchListCheck(t,
			watchHold(added(cmUID("a", "5")), added(cmUID("b", "6")), bookmarked(initialEventsEnd("10"))),
			listStep("10", cmUID("b", "6"), cmUID("a", "5")),
		)
		assert.Equal(t, []string{`watch rv="" match=NotOlderThan sendInitialEvents`, `list rv="10" match=Exact`}, calls,
			"one unpaged LIST at exactly the bookmark's RV (Exact)")
		assert.Equal(t, []string{"replace [a b] rv=10"}, ops, "the stream's objects, in the stream's order")
		assert.Empty(t, found)
	})
}

func TestWatchListCheckNamesEveryDifferenceAndTheStoreGetsTheList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recreated := cm("d", "8")
		recreated.UID = "uid-d-2" // d deleted and created again: same key, new UID
		calls, ops, found, logs := runWatchListCheck(t,
			watchHold(added(cmUID("a", "5")), added(cmUID("c", "7")), added(cmUID("d", "4")), bookmarked(initialEventsEnd("10"))),
			listStep("10", cmUID("a", "9"), cmUID("b", "6"), recreated),
		)
		require.Len(t, calls, 2)
		assert.Equal(t, []string{"replace [a b d] rv=10"}, ops, "the store gets the LIST's state at the bookmark's RV")
		require.Len(t, found, 1)
		ierr := found[0]
		assert.Equal(t, "10", ierr.ResourceVersion)
		assert.Equal(t, []Difference{
			{Key: "ns/a", UID: "uid-a", Streamed: "5", Listed: "9"},
			{Key: "ns/b", UID: "uid-b", Listed: "6"},
			{Key: "ns/c", UID: "uid-c", Streamed: "7"},
			{Key: "ns/d", UID: "uid-d", Streamed: "4"},
			{Key: "ns/d", UID: "uid-d-2", Listed: "8"},
		}, ierr.Differences)
		assert.ErrorIs(t, ierr, ErrInconsistentWatchList)
		for _, want := range []string{
			"ns/a (uid uid-a) streamed at rv 5, listed at rv 9",
			"ns/b (uid uid-b) listed at rv 6 but not streamed",
			"ns/c (uid uid-c) streamed at rv 7 but not listed",
		} {
			assert.Contains(t, ierr.Error(), want)
		}
		assert.Len(t, logs.Lines("ERROR watch-list inconsistent with a LIST at its resourceVersion"), 1)
	})
}

func TestWatchListCheckThatCannotListIsAWarningAndTheStreamIsKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, ops, found, logs := runWatchListCheck(t,
			watchHold(added(cmUID("a", "5")), bookmarked(initialEventsEnd("10"))),
			listErr(errInternal()),
		)
		assert.Equal(t, []string{"replace [a] rv=10"}, ops)
		assert.Empty(t, found)
		assert.Len(t, logs.Lines("WARN watch-list consistency check skipped: the LIST failed"), 1)
	})
}

func TestWatchListCheckIsOffByDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The script has no LIST: a check would fail the test with a call beyond it.
		lw := newScriptedLW(t, watchHold(added(cmUID("a", "5")), bookmarked(initialEventsEnd("10"))))
		store := &recordingStore{}
		r, err := NewReflector(lw, store, Options[cmT]{})
		require.NoError(t, err)
		runUntilExhausted(t, r, lw)
		assert.Equal(t, []string{"replace [a] rv=10"}, store.Ops())
	})
}

func TestInconsistencyErrorNamesTenObjectsAndCountsTheRest(t *testing.T) {
	var listed []cmT
	for i := range 25 {
		listed = append(listed, cmUID(fmt.Sprintf("o%02d", i), "1"))
	}
	ierr := &InconsistencyError{Reflector: "cms", ResourceVersion: "7", Differences: compareByUID(nil, listed)}
	msg := ierr.Error()
	assert.True(t, strings.HasPrefix(msg, "cms: the watch-list differs from a LIST at the same resourceVersion (rv 7): 25 object(s): ns/o00 "), msg)
	assert.Contains(t, msg, "ns/o09 (uid uid-o09)")
	assert.NotContains(t, msg, "ns/o10")
	assert.True(t, strings.HasSuffix(msg, "; and 15 more"), msg)
	assert.True(t, errors.Is(ierr, ErrInconsistentWatchList))
}
