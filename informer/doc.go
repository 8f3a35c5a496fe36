// Package informer composes the reflector, a queue (RealFIFO or DeltaFIFO) and the
// indexer into a shared informer: one list+watch and one cache per resource, fanned
// out to any number of event handlers. The zero Options are client-go 1.37's informer:
// a RealFIFO fed by a watch-list (a LIST when the server refuses one). The classic
// pipeline, DeltaFIFO fed by a paged LIST, is chosen by name:
// Options{Queue: DeltaFIFOQueue, InitialList: reflector.PagedList}. The Factory's
// For[*metav1.PartialObjectMetadata] is an informer of the metadata only, of any
// resource (client-go's metadatainformer).
//
//	reflector ──▶ RealFIFO/DeltaFIFO ──Pop──▶ [processLoop ──▶ indexer] ──distribute──▶ listeners ──▶ handlers
//	                                           ^^^^^^^^^^^^ this package ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
//
// What happens to one change, step by step:
//
//  1. The reflector writes it into the queue (Add/Update/Delete, or Replace for a
//     relist, Resync for a periodic resync).
//  2. processLoop pops it and, holding blockDeltas, applies it to the indexer (the
//     cache) — so the cache is updated before any handler hears of the change — and
//     hands a notification to the sharedProcessor (deltas.go).
//  3. The sharedProcessor appends the notification to each listener's unbounded
//     buffer (processor.go) — never blocking, so a slow handler cannot stall the
//     informer or the other handlers.
//  4. Each listener's goroutine calls its handler's OnAdd/OnUpdate/OnDelete in order
//     (listener.go), recovering a panic.
//
// Invariants:
//   - The cache is written only by processLoop; handlers and Listers only read it.
//   - Per handler, notifications arrive in the order the informer applied them.
//   - A handler added after Run first receives every cached object as an add with
//     isInInitialList=true, then live changes, with nothing missed or doubled:
//     blockDeltas keeps the replay and the live notifications apart.
//   - informer HasSynced: the first list has been popped and applied. Registration
//     HasSynced: additionally, that handler has handled every initial add — for a
//     late handler, every add of its replay, which holds the registration's sync
//     until it is fully queued (registration.go).
//   - A change the cache rejects (an IndexFunc error) costs that object only: it is
//     logged with its key and the rest of its batch or relist is applied.
//   - An update whose old and new objects share a resourceVersion is a "resync" and
//     goes only to handlers due a resync.
//
// Reading order: handler.go (what you implement) and deleted.go (what OnDelete
// receives), informer.go (the type and its
// options), run.go (Run and the processing loop), deltas.go (from deltas to cache to
// notifications), processor.go and listener.go (fan-out; the buffer is internal/fifo), synctrack.go,
// registration.go (adding and removing handlers) and shutdown.go (removing one and
// waiting until it has stopped), wait.go and syncerrors.go
// (WaitForCacheSync that tells you why), resource.go and factory.go (one informer per
// resource), mutation.go (the optional cache mutation detector), metrics.go (what
// Options.MetricsProvider is given),
// trace.go (what the informer reports to Options.Tracer: each indexer write with the
// index values it changed, each fan-out and handler call; see package trace),
// stuckwatch.go (WatchHealthy: is the watch alive?).
//
// # Is my watch stuck?
//
// A watch can stop delivering without ending: a connection frozen on the way, a proxy
// holding the stream, an apiserver no longer writing to it. The reflector then waits
// on it and the cache silently stops changing. WatchHealthy (on an informer, or on the
// Factory for every informer it started) reports it: after the informer has synced, an
// error wrapping ErrWatchStuck once the watch has shown no sign of life — no event, no
// bookmark, no new watch opened, no relist — for longer than a threshold, whether a
// stream is open and silent or none is open (requests failing, the reflector backing
// off). A relist counts as life while it receives pages, however long it takes in
// all — many pages from a slow apiserver, or the LIST after a watch-list was cut too
// often — and is stuck only once its pages stop; the error then says "relisting
// since …". The default, DefaultWatchStuckAfter, is 2 minutes: two of kube-apiserver's
// bookmark intervals (reflector.BookmarkInterval; its watch cache sends each watch a
// bookmark about once a minute, however quiet the resource). Before sync, and after
// Run returned, it returns nil: whether the cache fills is readiness's question. The
// metrics say the same for alerts: reflector_watch_open (0 while no stream is open)
// and reflector_last_event_timestamp_seconds.
//
// What it cannot tell:
//   - A quiet resource from a stuck watch when the server sends no bookmarks: a
//     resource kube-apiserver serves without a watch cache
//     (--watch-cache-sizes=<resource>#0, --watch-cache=false) gets none but a
//     watch-list's end bookmark, and neither does a server that is not kube-apiserver
//     unless it sends its own. Such a watch fails the check whenever the resource is quiet for the threshold:
//     raise it, or leave that informer out. A threshold below the bookmark interval
//     does the same to every quiet resource.
//   - Whether what arrives is complete or current: a stream that delivers bookmarks
//     is alive, even if it missed an event.
//   - Why: a freeze, a refusal, a server that is down look alike but for the Open flag
//     (WatchActivity) and the last list/watch error the message carries.
//
// What ends a stuck watch without the check: the watch's timeout (5–10 minutes) is the
// server's, and its end travels on the same stream, so it does not free a frozen one;
// over HTTP/2, client-go's rest transport pings a connection silent for 30s and closes
// it after 15s without an answer, which frees a stream whose whole connection is
// frozen (the reflector re-watches or relists). Nothing frees a stream stalled behind a
// proxy that answers the pings itself, or an HTTP/1.1 connection a middlebox keeps
// alive. As a liveness probe (foo-controller's /healthz), a failing check restarts the
// process; so does a long apiserver outage, once — a restarted process has not synced,
// so the check passes until it has.
//
// # Differences from client-go
//
//   - Only typed: SharedIndexInformer[T]; handlers receive T, never interface{}, and
//     a delete a DeletedObject[T] whose tombstone is typed, so the classic
//     obj.(*v1.Pod) panic on DeletedFinalStateUnknown cannot be written. client-go 1.37
//     has typed handlers of the same shape (TypedResourceEventHandler[T],
//     DeletedObject[T]; ours drop the "Typed" prefix); what still differs is
//     underneath: there they adapt untyped stores, asserting each object to T (a T
//     that does not match panics at the first event; here it does not compile), its
//     DeletedObject can hold a nil object, and the untyped handlers remain.
//   - The classic pipeline is an option per informer. The zero values match client-go
//     1.37 (RealFIFO: its InOrderInformers gate is GA and locked on; watch-list: its
//     WatchListClient gate is on), where the classic pipeline can only be reached
//     through process-wide gates, and not at all for the queue. Here Options.Queue =
//     DeltaFIFOQueue and Options.InitialList = reflector.PagedList choose it for one
//     informer; both pipelines pass the same test suite, but behind DeltaFIFO handlers
//     see an object's changes grouped (another order across objects) and no delete of
//     a key the cache does not hold. An unknown value is an error wrapping
//     reflector.ErrInvalidOptions. docs/defaults.md lists what we keep different.
//   - One goroutine per listener instead of three, and no channel hop per
//     notification (listener.go); backlog high-water mark exposed (Registration.HighWater)
//     and logged at 1024, 2048, …. client-go logs no backlog; its processorListener.run
//     logs a handler call over 100ms while more than 1024 notifications wait for that
//     handler, which we do not time.
//   - A panicking handler is recovered and logged with the object's key and the
//     stack trace (client-go's HandleCrash logs the stack too, then by default
//     re-panics and crashes the process). A recovered initial add still counts
//     as handled, so the registration can sync without that object handled;
//     client-go, told not to crash, never counts it, and that registration never
//     syncs (processorListener.run calls syncTracker.Finished after OnAdd returns).
//   - ShutDownEventHandler is a method of the informer (client-go's is a package
//     function: its informer is an interface) and takes a ctx. It returns
//     ErrShutDownFromOwnHandler when called from inside the handler it shuts down,
//     where client-go's only says it MUST NOT be and deadlocks, and
//     ErrForeignRegistration for another informer's registration, where client-go's
//     waits for that handler to stop (shutdown.go).
//   - Logs go to Options.Logger, slog.Default() when it is nil; client-go logs through
//     klog.
//   - WaitForCacheSync waits on channels (client-go polls every 100ms) and returns an
//     error carrying the reflector's last list error; it returns at once on 401, 403
//     or 404 (missing RBAC, missing CRD) instead of waiting for ctx;
//     WaitForCacheSyncWithOptions waits through the errors the caller chooses and reports
//     why it is still waiting.
//   - Factory: For takes extra Indexers (client-go: InformerFor, then AddIndexers); it
//     checks a typed T against the resource through the scheme (client-go cannot: its
//     typed informers are generated per resource); Factory.WaitForCacheSync returns
//     ErrNotStarted for an informer requested after Start, where client-go's skips it.
//     Factory informers log their namespace and selectors.
//   - An object an IndexFunc rejects is the only one lost: it is logged with its key
//     and skipped, the rest of its RealFIFO batch or relist is applied, and a cached
//     version stays (deltas.go). client-go's indexer panics and the process exits.
//   - The two detectors are options, not environment variables, and they report
//     instead of panicking: Options.MutationDetector (client-go's
//     KUBE_CACHE_MUTATION_DETECTOR; mutation.go) and Options.CheckWatchList
//     (KUBE_WATCHLIST_INCONSISTENCY_DETECTOR), which also repairs the cache.
//   - WatchHealthy and WatchActivity have no counterpart: client-go's informers, its
//     factory and its reflector expose nothing of the watch's liveness
//     (stuckwatch.go).
//   - Metrics come from a provider per informer (Options.MetricsProvider, which also
//     serves its reflector and its handlers), not from process-wide providers set
//     once; client-go 1.37 declares reflector metrics it never records (metrics.go).
//     With no process-wide registry of informer names, a Factory publishes one
//     informer per name and logs a duplicate, as client-go's InformerName.WithResource
//     does; informers built directly must be named apart. A removed handler's series
//     are deleted (MetricsProvider.DeleteHandlerMetrics).
//
// client-go: tools/cache/shared_informer.go sharedIndexInformer, tools/cache/controller.go processDeltas
package informer
