// Package reflector keeps a local store in step with one resource of a Kubernetes API
// server: it fetches the whole state once, then WATCHes for changes, and fetches it again
// (relists) whenever the watch cannot safely go on. By default, as in client-go 1.35+, the
// state arrives as a watch-list — one watch that streams it and stays open — with a paged
// LIST as the fallback; InitialList: PagedList chooses the classic LIST then WATCH. It is
// client-go's Reflector and pager (tools/cache/reflector.go, tools/pager), rebuilt on
// k8s.io/client-go/rest alone, with the object type as a type parameter.
//
// # Where it sits
//
//	kube-apiserver
//	    │  watch-list stream / LIST (paged) / WATCH (JSON or protobuf stream)
//	    ▼
//	reflector.Reflector ◀── this package: ListerWatcher, Pager, Reflector
//	    │  Add / Update / Delete / Replace / Resync (+ Bookmark)
//	    ▼
//	deltafifo.RealFIFO or DeltaFIFO (or any Store) ──▶ informer ──▶ indexer, handlers
//
// The reflector writes into the small Store interface it defines (the consumer owns
// the interface); RealFIFO, DeltaFIFO and the indexer satisfy it. It never reads the
// store back.
//
// # The state machine
//
// Run repeats one cycle — get the full state, then watch — until ctx ends. Every
// transition below is marked in the code with a "Transition <id>" comment (grep for
// "Transition L3"); L1, L2, L5, P1 and S6 are the functions relistResourceVersion,
// list, Run, Pager.List and the end-bookmark warning in watch.go. The path is decided
// once, in NewReflector: WATCH-LIST (S*) with the default InitialList, WatchList; LIST
// (L*, P1) with PagedList or a ListerWatcher that implements WatchListUnsupporter and
// returns true, and as the fallback of a refused watch-list (S5). WATCH (W*) follows
// either. A relist is the next cycle's fetch, by the same path.
//
//	       ┌─────────────────────────────── BACKOFF (800ms·2ⁿ ≤ 30s, +jitter) ◀────────────────┐
//	       ▼                                                                                   │
//	┌── watch-list? ──yes (the default)──▶ WATCH-LIST ──end bookmark──▶ Replace ──┐            │
//	│                                        │ refused                            │ same       │
//	no: PagedList, or the ListerWatcher      ▼                                    ▼ stream     │
//	└── cannot serve one ──────────────────▶ LIST ──ok──▶ Replace ──────────────▶ WATCH ─relist┘
//	                                         │ error ──────────────────────────────────────────┘
//
// LIST — the classic path, and the fallback (client-go: tools/cache/reflector.go Reflector.list)
//
//   - L1 list at relistResourceVersion: "0" the first time (any recent state; the watch
//     cache answers), the last synced RV afterwards ("at least this new": never back
//     in time), "" (a consistent read) once that RV proved unavailable.
//     client-go: tools/cache/reflector.go Reflector.relistResourceVersion
//   - L2 paging: PageSize if set; pages of 500 at RV "0"/"" or if the first list came
//     back paged (watch cache off); one unpaged request at a specific RV, because only
//     an unpaged list can be served by the watch cache.
//   - L3 410 Expired or "too large resource version" → mark the RV unavailable and
//     list again at once at RV "".
//     client-go: tools/cache/reflector.go isExpiredError, isTooLargeResourceVersionError
//   - L4 success → store.Replace(items, rv); lastSyncRV = rv → WATCH.
//   - L5 any other error → the cycle ends → BACKOFF → relist.
//   - P1 (Pager) follows continue tokens; a 410 on a later page → one full list at the
//     original RV. client-go: tools/pager/pager.go ListPager.list
//
// WATCH — both paths; after a watch-list, first on its own stream (client-go:
// tools/cache/reflector.go Reflector.watch, handleAnyWatch)
//
//   - W1 watch from lastSyncRV with allowWatchBookmarks and a random timeout in
//     [5m, 10m) (MinWatchTimeout raises it). Why bookmarks: they keep lastSyncRV fresh
//     on a quiet resource, so a re-watch is less likely to get 410 and relist.
//   - W2 refused with connection refused or 429 → back off → W1 at the same RV, no relist.
//     client-go: tools/cache/reflector.go isWatchErrorRetriable
//   - W3 refused otherwise → BACKOFF → relist.
//   - W4 ADDED / MODIFIED / DELETED → store.Add / Update / Delete; lastSyncRV advances
//     (after a watch from RV ""/"0", only once a non-ADDED event proves the synthetic
//     ADDEDs are over).
//   - W5 BOOKMARK → lastSyncRV advances; the store's objects do not change (a
//     BookmarkStore is told the RV).
//   - W6 the stream ends without an error (the server's timeout, or a connection
//     closed or reset on the way) → W1 at once, no relist.
//   - W7 closed in under 1s with no events (ErrVeryShortWatch) → BACKOFF → relist.
//   - W8 ERROR event 410 Expired → BACKOFF → relist at lastSyncRV (the RV is NOT marked
//     unavailable: that RV may still be served; S3 or L3 handles it if not).
//   - W9 ERROR event 429 → back off → W1.
//   - W10 any other ERROR event, or a failed Resync → BACKOFF → relist.
//
// WATCH-LIST — the default, InitialList: WatchList (client-go: tools/cache/reflector.go
// Reflector.watchList)
//
//   - S1 watch with sendInitialEvents=true, resourceVersionMatch=NotOlderThan, at the
//     last synced RV ("" at first or when unavailable); the server sends one ADDED per
//     object, then a BOOKMARK annotated k8s.io/initial-events-end.
//   - S2 end bookmark → store.Replace(buffered objects, bookmark RV) → WATCH on the very
//     same stream. With CheckWatchList, first one LIST at exactly the bookmark RV
//     (resourceVersionMatch=Exact), compared by UID and resourceVersion; a difference
//     is reported (InconsistencyError) and the store gets the LIST's objects.
//   - S3 connection refused or 429 → back off → S1; 410 or too-large RV → S1 at RV "".
//   - S4 closed before the end bookmark → BACKOFF → S1 with an empty buffer, counted
//     as a relist (RelistWatchListEndedEarly); a close within 1s with no events is
//     ErrVeryShortWatch, handled by S5.
//   - S7 the WatchListCutsBeforeList-th (3rd) such close in a row within one cycle →
//     LIST at RV "" in pages, in the same cycle; the next cycle tries S1 again. Why
//     RV "": the watch cache answers a LIST at "0" or at a specific RV in one
//     response, as long as the stream that was cut; a consistent read is paged.
//   - S5 refused otherwise (e.g. an old server), or ended before the end bookmark by
//     any other error → LIST, in the same cycle (client-go:
//     Reflector.ListAndWatchWithContext); the next cycle tries S1 again.
//   - S6 while the end bookmark is missing, a 10s ticker checks the stream and warns
//     when no event has arrived yet or the last one is at least 10s old; a stream
//     still delivering initial events is not warned about.
//
// Around them: R1 a resync timer calls store.Resync every ResyncPeriod (when
// ShouldResync allows) for as long as a watch runs (client-go: Reflector.startResync);
// B1 each cycle that ends is handed to the WatchErrorHandler, then BACKOFF waits
// 800ms, doubling to 30s, each delay plus up to 100% jitter, started over by the first
// failure more than 2 minutes after the sequence began — so during a long outage it
// drops back to 800ms every 2–3 minutes (client-go: Reflector.RunWithContext).
//
// # Invariants
//
//   - The store sees Replace once per successful (re)list, with everything, before any
//     watch event of that cycle, and watch events in server order.
//   - LastSyncResourceVersion only moves to an RV whose state the store has been given.
//   - A watch event's resourceVersion, key and bookmark annotation are read before the
//     store is called, and the object is not read again after: the store owns it from
//     then on (a transform may change it in place; handlers may already read it).
//   - An event whose object is nil is logged and skipped; the watch goes on. (The
//     REST ListerWatcher, package listwatch, logs and skips a wrong-type or
//     undecodable object itself, so the reflector never sees one.)
//   - When Run returns, no goroutine it started is left: not the watch stream's
//     decoder, not the resync timer, not a backoff timer. Cancelling ctx aborts a LIST
//     in flight.
//   - Nothing here panics on bad input: constructors return ErrInvalidOptions.
//
// # Reading order
//
// store.go (what the reflector writes into), listerwatcher.go (what it reads from, and
// WatchListUnsupporter), reflector.go (InitialList, Options, Run), list.go (one cycle),
// pager.go, watch.go, watchlist.go, initialevents.go (the watch-list's buffer),
// consistency.go (the optional check of a watch-list against a LIST at its RV), resync.go,
// backoff.go, errors.go, trace.go (what it reports to Options.Tracer: one event per
// transition, see package trace), metrics.go (what it counts for
// Options.MetricsProvider: lists, watches, events, relists by reason), relists.go (what
// counts as a relist), activity.go
// (when the watch last showed life, for a stuck-watch check: WatchActivity, and
// BookmarkInterval, the apiserver's pace of bookmarks), and fakewatch.go for tests. The wire — the REST ListerWatcher, its framing and decoding —
// is package listwatch.
//
// # client-go 1.35+ defaults and ours
//
//	                  client-go v0.37.2                          this package
//	initial state     watch-list stream (WatchListClient gate),  the same (InitialList zero value
//	                  LIST if refused or unsupported             WatchList); PagedList: the LIST
//	wire format       protobuf for built-ins in typed clients    listwatch: JSON; Protobuf: true
//	                  and generated informers; JSON otherwise    (the informer Factory: as client-go)
//	backoff           800ms ×2 ≤30s, jitter 1.0, reset 2m        same
//	watch timeout     random [5m, 10m)                           same
//	page size         500                                        same
//
// # Differences from client-go
//
//   - Typed: ListerWatcher[T] decodes into T itself, so the reflector has no expected
//     type to check at run time. client-go's stream decoder turns an undecodable
//     object into an ERROR event, which ends the watch and relists everything; the
//     REST ListerWatcher skips that one event (see listwatch.RESTListerWatcher.Watch).
//   - The WatchErrorHandler sees every error that ends a cycle, including a watch that
//     ended with 410 or an ERROR event; client-go logs those inside watch() and calls
//     its handler only for LIST and watch-start failures. DefaultWatchErrorHandler keeps
//     a clean EOF silent, like client-go's, but logs a 410 at Info, where client-go's
//     logs it at verbosity 4, hidden by default: each 410 costs a relist, and a storm
//     of them must show without metrics. The relists after a 410 inside a cycle (a
//     LIST's L3, a watch-list's S3) are logged at Info too.
//   - The LIST runs in Run's goroutine with ctx; client-go runs it in a goroutine with
//     context.Background(), so cancelling stops the wait but not the request.
//   - The watch-list backoff returns when ctx ends; client-go's sleeps through it.
//   - A watch-list stream cut before its end bookmark (S4): client-go starts over at
//     once, forever — behind a proxy that cuts every stream after a fixed time, a
//     watch-list longer than that never syncs, and each attempt streams the whole
//     state again. We back off between cuts and, after WatchListCutsBeforeList cuts in
//     a row, list instead for that cycle (S7).
//   - The name defaults to the Go type, not a file:line (client-go means the caller's;
//     built from the module cache it names its own reflector.go line); logs go to slog.
//   - The watch-list consistency check is an option per reflector (CheckWatchList), not
//     the process-wide KUBE_WATCHLIST_INCONSISTENCY_DETECTOR variable. client-go's
//     retries its LIST until it succeeds and panics on a difference (it is meant for
//     CI); ours lists once, reports the difference (log, OnInconsistency) and repairs
//     the store from the LIST.
//   - Simplified (each safe because nothing in this module relies on it):
//     MaxInternalErrorRetryDuration (default 0 = off in client-go; a 500 always
//     relists here), ResourceVersionUpdater, the TransformingStore used while
//     buffering watch-list events (our stores transform in Replace), the Table-kind
//     checks (we never ask for Table output), the slow-list trace, an injectable clock
//     (tests use testing/synctest), and the GVK check for unstructured objects.
package reflector
