package reflector

import (
	"fmt"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStateMachine drives every transition of doc.go's state machine with a scripted
// API server and checks the exact sequence of requests and store calls.
func TestStateMachine(t *testing.T) {
	tests := []struct {
		name string
		opts Options[cmT]
		// bookmarkStore uses a store that implements BookmarkStore.
		bookmarkStore bool
		// watchListUnsupported wraps the script in a ListWatch that declares it
		// cannot serve a watch-list (WatchListUnsupporter).
		watchListUnsupported bool
		// replaceErr is returned by the store's first Replace.
		replaceErr error
		script     []step
		wantCalls  []string
		wantOps    []string
		wantRV     string
	}{
		{
			name: "the first list is at RV 0 with pages of 500, then the watch starts at the list's RV",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				listStep("10", cm("a", "9")),
				watchHold(added(cm("b", "11"))),
			},
			wantCalls: []string{`list rv="0" limit=500`, `watch rv="10"`},
			wantOps:   []string{"replace [a] rv=10", "add b@11"},
			wantRV:    "11",
		},
		{
			name: "watch events reach the store in order and advance the RV",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				listStep("10"),
				watchHold(added(cm("a", "11")), modified(cm("a", "12")), deleted(cm("a", "13"))),
			},
			wantCalls: []string{`list rv="0" limit=500`, `watch rv="10"`},
			wantOps:   []string{"replace [] rv=10", "add a@11", "update a@12", "delete a@13"},
			wantRV:    "13",
		},
		{
			name: "410 on the watch relists at the last RV unpaged, and 410 on that list relists at RV \"\"",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				listStep("10", cm("a", "9")),
				watchClose(0, added(cm("b", "11")), errorEvent(errExpired())),
				listErr(errExpired()),
				listStep("20", cm("a", "9"), cm("b", "11"), cm("c", "20")),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `watch rv="10"`, `list rv="11"`, `list rv=""`, `watch rv="20"`},
			wantOps:   []string{"replace [a] rv=10", "add b@11", "replace [a b c] rv=20"},
			wantRV:    "20",
		},
		{
			name: "a too-large-RV error on a relist retries at RV \"\"",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				listStep("10"),
				watchClose(0, errorEvent(errExpired())),
				listErr(errTooLargeRV()),
				listStep("30"),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `watch rv="10"`, `list rv="10"`, `list rv=""`, `watch rv="30"`},
			wantOps:   []string{"replace [] rv=10", "replace [] rv=30"},
			wantRV:    "30",
		},
		{
			name: "410 on the first list retries at once at RV \"\" with the same paging",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				listErr(errExpired()),
				listStep("7", cm("a", "7")),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `list rv="" limit=500`, `watch rv="7"`},
			wantOps:   []string{"replace [a] rv=7"},
			wantRV:    "7",
		},
		{
			name: "a failed list is retried after a backoff at the same RV",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				listErr(errInternal()),
				listStep("7"),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `list rv="0" limit=500`, `watch rv="7"`},
			wantOps:   []string{"replace [] rv=7"},
			wantRV:    "7",
		},
		{
			name: "a watch the server closes normally is re-watched from the last RV without a relist",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				listStep("10"),
				watchClose(5*time.Second, added(cm("a", "11"))),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `watch rv="10"`, `watch rv="11"`},
			wantOps:   []string{"replace [] rv=10", "add a@11"},
			wantRV:    "11",
		},
		{
			name: "a quiet watch that lasted over a second is re-watched without a relist",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				listStep("10"),
				watchClose(2 * time.Second),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `watch rv="10"`, `watch rv="10"`},
			wantOps:   []string{"replace [] rv=10"},
			wantRV:    "10",
		},
		{
			name: "a watch that closes in under a second with no events forces a relist",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				listStep("10"),
				watchClose(0),
				listStep("12", cm("a", "12")),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `watch rv="10"`, `list rv="10"`, `watch rv="12"`},
			wantOps:   []string{"replace [] rv=10", "replace [a] rv=12"},
			wantRV:    "12",
		},
		{
			name: "a watch refused with 429 is retried at the same RV without a relist",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				listStep("10"),
				watchErr(errTooManyRequests()),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `watch rv="10"`, `watch rv="10"`},
			wantOps:   []string{"replace [] rv=10"},
			wantRV:    "10",
		},
		{
			name: "a watch refused with connection refused is retried at the same RV without a relist",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				listStep("10"),
				watchErr(fmt.Errorf("dial tcp 127.0.0.1:6443: %w", syscall.ECONNREFUSED)),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `watch rv="10"`, `watch rv="10"`},
			wantOps:   []string{"replace [] rv=10"},
			wantRV:    "10",
		},
		{
			name: "a watch that ends with a 429 Error event is retried from the last RV without a relist",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				listStep("10"),
				watchClose(0, added(cm("a", "11")), errorEvent(errTooManyRequests())),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `watch rv="10"`, `watch rv="11"`},
			wantOps:   []string{"replace [] rv=10", "add a@11"},
			wantRV:    "11",
		},
		{
			name: "a watch refused with any other error relists",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				listStep("10"),
				watchErr(errInternal()),
				listStep("11"),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `watch rv="10"`, `list rv="10"`, `watch rv="11"`},
			wantOps:   []string{"replace [] rv=10", "replace [] rv=11"},
			wantRV:    "11",
		},
		{
			name: "a watch refused with 410 relists at the last RV unpaged, without marking it unavailable",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				listStep("10"),
				watchErr(errExpired()),
				listStep("11"),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `watch rv="10"`, `list rv="10"`, `watch rv="11"`},
			wantOps:   []string{"replace [] rv=10", "replace [] rv=11"},
			wantRV:    "11",
		},
		{
			name: "a bookmark-only stream advances the RV and leaves the store untouched",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				listStep("10", cm("a", "10")),
				watchClose(5*time.Second, bookmarked(bookmark("15")), bookmarked(bookmark("20"))),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `watch rv="10"`, `watch rv="20"`},
			wantOps:   []string{"replace [a] rv=10"},
			wantRV:    "20",
		},
		{
			name:          "a store that implements BookmarkStore is told every bookmark's RV",
			opts:          Options[cmT]{InitialList: PagedList},
			bookmarkStore: true,
			script: []step{
				listStep("10"),
				watchHold(bookmarked(bookmark("15"))),
			},
			wantCalls: []string{`list rv="0" limit=500`, `watch rv="10"`},
			wantOps:   []string{"replace [] rv=10", "bookmark rv=15"},
			wantRV:    "15",
		},
		{
			name: "a paged first list follows continue tokens and later relists stay paged",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				{verb: "list", rv: "10", cont: "page2", items: []cmT{cm("a", "5")}},
				listStep("10", cm("b", "6")),
				watchClose(0, errorEvent(errExpired())),
				listStep("12", cm("a", "5")),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `list rv="" limit=500 continue=page2`, `watch rv="10"`, `list rv="10" limit=500`, `watch rv="12"`},
			wantOps:   []string{"replace [a b] rv=10", "replace [a] rv=12"},
			wantRV:    "12",
		},
		{
			name: "an expired continue token falls back to one full list at the original RV",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				{verb: "list", rv: "10", cont: "page2", items: []cmT{cm("a", "5")}},
				listErr(errExpired()),
				listStep("11", cm("a", "5"), cm("b", "11")),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `list rv="" limit=500 continue=page2`, `list rv="0"`, `watch rv="11"`},
			wantOps:   []string{"replace [a b] rv=11"},
			wantRV:    "11",
		},
		{
			name: "PageSize forces pages on every list, including relists at a specific RV",
			opts: Options[cmT]{InitialList: PagedList, PageSize: 50},
			script: []step{
				listStep("10"),
				watchClose(0, errorEvent(errExpired())),
				listStep("11"),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=50`, `watch rv="10"`, `list rv="10" limit=50`, `watch rv="11"`},
			wantOps:   []string{"replace [] rv=10", "replace [] rv=11"},
			wantRV:    "11",
		},
		{
			name: "synthetic ADDED events of a watch from RV \"\" do not advance the RV until another event arrives",
			opts: Options[cmT]{InitialList: PagedList},
			script: []step{
				listStep(""), // a server that returns no RV: the watch then starts at ""
				watchClose(5*time.Second, added(cm("a", "5")), added(cm("b", "3"))),
				watchClose(5*time.Second, added(cm("a", "5")), modified(cm("b", "7"))),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `watch rv=""`, `watch rv=""`, `watch rv="7"`},
			wantOps:   []string{"replace [] rv=", "add a@5", "add b@3", "add a@5", "update b@7"},
			wantRV:    "7",
		},
		{
			name:       "a store that fails Replace makes the cycle fail and relist at the same RV",
			opts:       Options[cmT]{InitialList: PagedList},
			replaceErr: fmt.Errorf("store is full"),
			script: []step{
				listStep("10"),
				listStep("11"),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `list rv="0" limit=500`, `watch rv="11"`},
			wantOps:   []string{"replace [] rv=10", "replace [] rv=11"},
			wantRV:    "11",
		},
		{
			name: "with no InitialList chosen, the zero value streams a watch-list as client-go 1.37 does",
			opts: Options[cmT]{},
			script: []step{
				watchHold(added(cm("a", "5")), bookmarked(initialEventsEnd("5"))),
			},
			wantCalls: []string{`watch rv="" match=NotOlderThan sendInitialEvents`},
			wantOps:   []string{"replace [a] rv=5"},
			wantRV:    "5",
		},
		{
			name:                 "a ListerWatcher that declares it cannot serve a watch-list is listed, cycle after cycle",
			opts:                 Options[cmT]{InitialList: WatchList},
			watchListUnsupported: true,
			script: []step{
				listStep("10", cm("a", "10")),
				watchClose(0, errorEvent(errExpired())),
				listStep("11", cm("a", "10")),
				watchHold(),
			},
			wantCalls: []string{`list rv="0" limit=500`, `watch rv="10"`, `list rv="10"`, `watch rv="11"`},
			wantOps:   []string{"replace [a] rv=10", "replace [a] rv=11"},
			wantRV:    "11",
		},
		{
			name: "watch-list buffers the initial events, replaces at the end bookmark and keeps the same watch",
			opts: Options[cmT]{InitialList: WatchList},
			script: []step{
				watchHold(added(cm("a", "5")), added(cm("b", "6")), added(cm("c", "7")), deleted(cm("c", "8")),
					bookmarked(initialEventsEnd("9")), modified(cm("a", "10"))),
			},
			wantCalls: []string{`watch rv="" match=NotOlderThan sendInitialEvents`},
			wantOps:   []string{"replace [a b] rv=9", "update a@10"},
			wantRV:    "10",
		},
		{
			name: "a server that refuses watch-list gets the paged list instead",
			opts: Options[cmT]{InitialList: WatchList},
			script: []step{
				watchErr(errInternal()),
				listStep("10", cm("a", "10")),
				watchHold(),
			},
			wantCalls: []string{`watch rv="" match=NotOlderThan sendInitialEvents`, `list rv="0" limit=500`, `watch rv="10"`},
			wantOps:   []string{"replace [a] rv=10"},
			wantRV:    "10",
		},
		{
			name: "after a 410, watch-list restarts at the last RV, and at RV \"\" if that is expired too",
			opts: Options[cmT]{InitialList: WatchList},
			script: []step{
				watchClose(0, bookmarked(initialEventsEnd("9")), errorEvent(errExpired())),
				watchErr(errExpired()),
				watchHold(added(cm("a", "12")), bookmarked(initialEventsEnd("12"))),
			},
			wantCalls: []string{
				`watch rv="" match=NotOlderThan sendInitialEvents`,
				`watch rv="9" match=NotOlderThan sendInitialEvents`,
				`watch rv="" match=NotOlderThan sendInitialEvents`,
			},
			wantOps: []string{"replace [] rv=9", "replace [a] rv=12"},
			wantRV:  "12",
		},
		{
			name: "a 410 ERROR event before a watch-list's end bookmark drops the buffer and asks again at once at RV \"\"",
			opts: Options[cmT]{InitialList: WatchList},
			script: []step{
				watchClose(0, bookmarked(initialEventsEnd("9")), errorEvent(errExpired())),
				watchClose(0, added(cm("a", "10")), errorEvent(errExpired())),
				watchHold(added(cm("b", "12")), bookmarked(initialEventsEnd("12"))),
			},
			wantCalls: []string{
				`watch rv="" match=NotOlderThan sendInitialEvents`,
				`watch rv="9" match=NotOlderThan sendInitialEvents`,
				`watch rv="" match=NotOlderThan sendInitialEvents`,
			},
			wantOps: []string{"replace [] rv=9", "replace [b] rv=12"},
			wantRV:  "12",
		},
		{
			name: "a watch-list stream that closes before the end bookmark starts over with an empty buffer",
			opts: Options[cmT]{InitialList: WatchList},
			script: []step{
				watchClose(2*time.Second, added(cm("a", "5"))),
				watchHold(added(cm("b", "6")), bookmarked(initialEventsEnd("6"))),
			},
			wantCalls: []string{
				`watch rv="" match=NotOlderThan sendInitialEvents`,
				`watch rv="" match=NotOlderThan sendInitialEvents`,
			},
			wantOps: []string{"replace [b] rv=6"},
			wantRV:  "6",
		},
		{
			name: "a watch-list refused with 429 is retried as a watch-list after a backoff",
			opts: Options[cmT]{InitialList: WatchList},
			script: []step{
				watchErr(errTooManyRequests()),
				watchHold(bookmarked(initialEventsEnd("3"))),
			},
			wantCalls: []string{
				`watch rv="" match=NotOlderThan sendInitialEvents`,
				`watch rv="" match=NotOlderThan sendInitialEvents`,
			},
			wantOps: []string{"replace [] rv=3"},
			wantRV:  "3",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lw := newScriptedLW(t, tt.script...)
				bs := &bookmarkingStore{}
				rs := &bs.recordingStore
				var store Store[cmT] = rs
				if tt.bookmarkStore {
					store = bs
				}
				rs.replaceErr = tt.replaceErr
				var source ListerWatcher[cmT] = lw
				if tt.watchListUnsupported {
					source = ListWatch[cmT]{ListFunc: lw.List, WatchFunc: lw.Watch, WatchListUnsupported: true}
				}
				r, err := NewReflector(source, store, tt.opts)
				require.NoError(t, err)
				runUntilExhausted(t, r, lw)

				assert.Equal(t, tt.wantCalls, lw.Calls(), "requests")
				assert.Equal(t, tt.wantOps, rs.Ops(), "store calls")
				assert.Equal(t, tt.wantRV, r.LastSyncResourceVersion(), "LastSyncResourceVersion")
			})
		})
	}
}

// TestACutWatchListBacksOffAndTheThirdCutInARowLists: a proxy that cuts every stream
// after 2s, before the initial events end. client-go starts the watch-list over at
// once, forever; we back off between cuts (S4), and the third cut in a row lists
// instead, in the same cycle (S7).
func TestACutWatchListBacksOffAndTheThirdCutInARowLists(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := newScriptedLW(t,
			watchClose(2*time.Second, added(cm("a", "5"))),
			watchClose(2*time.Second, added(cm("a", "5"))),
			watchClose(2*time.Second, added(cm("a", "5"))),
			listStep("10", cm("a", "5")),
			watchHold(),
		)
		rs := &recordingStore{}
		// A jitter this small leaves the delays at exactly 800ms and 1.6s.
		r, err := NewReflector[cmT](lw, rs, Options[cmT]{Backoff: BackoffOptions{Jitter: 1e-12}})
		require.NoError(t, err)
		runUntilExhausted(t, r, lw)

		assert.Equal(t, []string{
			`watch rv="" match=NotOlderThan sendInitialEvents`,
			`watch rv="" match=NotOlderThan sendInitialEvents`,
			`watch rv="" match=NotOlderThan sendInitialEvents`,
			`list rv="" limit=500`, // a consistent read: the only LIST the watch cache pages
			`watch rv="10"`,
		}, lw.Calls())
		calls := lw.RawCalls()
		var gaps []time.Duration
		for i := 1; i < len(calls); i++ {
			gaps = append(gaps, calls[i].at.Sub(calls[i-1].at))
		}
		assert.Equal(t, []time.Duration{
			2*time.Second + 800*time.Millisecond,  // cut after 2s, then the first backoff
			2*time.Second + 1600*time.Millisecond, // cut, then the second
			2 * time.Second,                       // the third cut: the LIST at once
			0,                                     // the watch from the LIST's RV
		}, gaps)
		assert.Equal(t, []string{"replace [a] rv=10"}, rs.Ops())
	})
}
