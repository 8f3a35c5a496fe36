package trace

import "time"

// Stage names the part of the pipeline that reported an event. The values are the
// words the timeline prints.
type Stage string

// The stages, in the order a change passes them.
const (
	// Reflector: LIST and WATCH against the API server (package reflector).
	Reflector Stage = "reflector"
	// DeltaFIFO: the classic informer queue, one list of deltas per key.
	DeltaFIFO Stage = "deltafifo"
	// RealFIFO: client-go 1.37's default queue, every event in order.
	RealFIFO Stage = "realfifo"
	// Informer: the processLoop that applies deltas to the indexer and fans them out.
	Informer Stage = "informer"
	// Listener: one handler's buffer and goroutine (processorListener).
	Listener Stage = "listener"
	// Workqueue: the rate-limited queue of keys between handlers and workers.
	Workqueue Stage = "workqueue"
	// Controller: your code — a handler mapping an object to a key, a worker's sync.
	Controller Stage = "controller"
	// LeaderElection: a candidate competing for a Lease (package leaderelection); it
	// decides whether the controller's workers run at all.
	LeaderElection Stage = "leaderelection"
	// Experiment: whoever runs the pipeline — a lab scenario, the explorer's buttons,
	// a test — saying what it did to it (Tracer.Action), or what it saw outside the
	// library (a watch event read off the wire by hand has Kind WatchEvent). No stage
	// of the library reports it; it marks the moments a recording's plots and
	// timelines explain.
	Experiment Stage = "experiment"
	// Log: a log record the program wrote, captured by CaptureLogs. No stage of the
	// library reports it either: it is what the program's logger printed, kept in the
	// trace so that a recording answers "what was logged, and when" next to what
	// happened.
	Log Stage = "log"
)

// Kind says what happened. Each kind is reported by one stage; its comment lists the
// Event fields it sets besides Time, Stage, Kind and Source. The values are the words
// the timeline prints.
type Kind string

// Reflector kinds.
const (
	// ListStarted: a LIST (Type "list") or a streaming watch-list (Type "watch-list")
	// began. ResourceVersion is the one asked for ("" = most recent, "0" = any).
	ListStarted Kind = "list started"
	// Listed: the initial state is in. Type ("list" or "watch-list"), Items,
	// ResourceVersion (the list's), Paged (the LIST came back in several pages).
	Listed Kind = "listed"
	// WatchStarted: a WATCH request began from ResourceVersion.
	WatchStarted Kind = "watch started"
	// WatchEvent: one watch event arrived. Type (ADDED, MODIFIED, DELETED), Key,
	// ResourceVersion.
	WatchEvent Kind = "watch event"
	// Bookmark: a BOOKMARK moved the reflector to ResourceVersion without an object.
	Bookmark Kind = "bookmark"
	// WatchEnded: the watch stopped. Reason says why (the server closed it, an error,
	// the context ended); ResourceVersion is where the next watch will start.
	WatchEnded Kind = "watch ended"
	// Relist: the reflector will LIST again instead of re-watching. Reason: the 410,
	// the too-large resourceVersion, the error.
	Relist Kind = "relist"
	// Backoff: the reflector waits Duration before its next attempt. Reason is the
	// error that ended the last one, or "before the relist" when the Relist just
	// before it already gave the reason.
	Backoff Kind = "backoff"
	// ResyncTick: the resync timer fired. Reason says whether the store was resynced or
	// why not (no handler due).
	ResyncTick Kind = "resync tick"
	// ShardFiltering: a sharded ListerWatcher (listwatch.WithShard, under the
	// reflector) learned who keeps the objects outside its shard out of the cache:
	// Type "server" (a LIST echoed the shard selector) or "client" (the apiserver
	// ignored it, and every object comes), Reason why, Detail the shard's selector.
	// Reported when it changes, not per request.
	ShardFiltering Kind = "shard filtering"
	// ShardDropped: the sharded ListerWatcher dropped an object outside its shard
	// before the reflector saw it. Key, ResourceVersion, Detail (the object's hash).
	ShardDropped Kind = "shard dropped"
)

// Queue kinds (DeltaFIFO and RealFIFO).
const (
	// Queued: a delta was queued. Type (Added, Updated, Deleted, Replaced, Sync …), Key,
	// ResourceVersion, Pending (deltas now waiting for Key; DeltaFIFO only), QueueLen.
	// Reason is "coalesced" when it merged into the delta before it instead of adding
	// one (two Deleted in a row).
	Queued Kind = "queued"
	// Replaced: a relist's full state was queued. Items, Tombstones (deletes inferred
	// for keys the list no longer has), QueueLen.
	Replaced Kind = "replaced"
	// DeleteDropped: a Delete for a Key the queue neither holds nor knows was dropped.
	DeleteDropped Kind = "delete dropped"
	// Popped: the consumer took an entry. Key, Pending (its deltas), QueueLen (what is
	// left). RealFIFO pops a batch: Pending is then the batch size, Key its first key.
	Popped Kind = "popped"
)

// Informer kinds.
const (
	// Applied: a delta was written to the indexer. Type (add, update, delete), Key,
	// ResourceVersion, Detail (which index values changed, if any index is defined;
	// for a delete of an object the cache did not hold, that nothing was removed).
	Applied Kind = "applied"
	// FannedOut: a notification went to Listeners handlers; Skipped listeners were not
	// due for the resync this notification is. Type (add, update, delete), Key,
	// ResourceVersion.
	FannedOut Kind = "fanned out"
)

// Listener kinds (Source names the handler).
const (
	// Buffered: a notification entered the handler's buffer. Type, Key,
	// ResourceVersion, Backlog (notifications now waiting for the handler).
	Buffered Kind = "buffered"
	// HandlerCalled: the handler's OnAdd/OnUpdate/OnDelete (Type) was called for Key,
	// at ResourceVersion (the new object's; a delete's, the last known).
	HandlerCalled Kind = "handler called"
	// HandlerReturned: it returned after Duration (Key, Type and ResourceVersion as
	// for HandlerCalled).
	HandlerReturned Kind = "handler returned"
	// PanicRecovered: it panicked; Reason is the panic value. The listener goes on.
	PanicRecovered Kind = "panic recovered"
)

// Workqueue kinds (Key is the item, printed with its String method if it has one).
const (
	// Added: Add was called. Reason: "new" (queued, QueueLen after), "deduplicated"
	// (already waiting: nothing changes), "dirty" (being processed: Done will queue it
	// again), "shutting down" (ignored).
	Added Kind = "added"
	// AddedAfter: AddAfter held Key back for Duration.
	AddedAfter Kind = "added after"
	// RateLimited: AddRateLimited held Key back for Duration; Requeues counts the
	// rate-limited adds since its last Forget, this one included.
	RateLimited Kind = "rate limited"
	// Got: a worker got Key after Duration waiting in the queue; QueueLen is what is
	// left.
	Got Kind = "got"
	// Done: the worker finished Key. Reason "requeued" when it was added meanwhile.
	Done Kind = "done"
	// Forgot: Forget reset Key's backoff.
	Forgot Kind = "forgot"
	// ShutDown: the queue stopped taking adds. Reason "drain" for ShutDownWithDrain.
	ShutDown Kind = "shut down"
)

// Controller kinds, reported by your code through Tracer.Map and Tracer.Reconciled.
const (
	// Mapped: a handler turned Key (an object of Source) into the workqueue key
	// Detail — the owner reference from a Deployment to its Foo, say.
	Mapped Kind = "mapped"
	// Reconciled: a worker's sync of Key ended after Duration; Reason is its error,
	// "" on success.
	Reconciled Kind = "reconciled"
)

// Leader election kinds (Source is the candidate's identity, Key the Lease's
// namespace/name, Type the transition taken: A1–A4, R1–R7, S2, S4, O1 in package
// leaderelection's doc).
const (
	// LeaseTried: an attempt to acquire or renew the lease failed; Reason says why
	// (held by Detail and not expired, or the Lock's error).
	LeaseTried Kind = "tried"
	// LeaseAcquired: the candidate now holds the lease; Reason says how (created it,
	// or took it over from Detail, with the lease's transition count).
	LeaseAcquired Kind = "acquired"
	// LeaseRenewed: the leader renewed the lease, Duration after its previous
	// renewal (or acquisition).
	LeaseRenewed Kind = "renewed"
	// LeaseLost: the leader stopped leading at once: a renewal round failed for its
	// renew deadline, a renewal read another holder, its own deadline passed, or a
	// renewal failed while its work drained, or the Lease was deleted or cleared by a
	// non-candidate (Type: R4, R5, R6, S4, R7); Duration since it
	// sent its last successful renewal, Reason why.
	LeaseLost Kind = "lost"
	// LeaseReleased: the leader cleared the lease's holder on its way out.
	LeaseReleased Kind = "released"
	// NewLeaderObserved: the candidate saw the holder change to Detail ("" when the
	// lease was released and nobody holds it).
	NewLeaderObserved Kind = "new leader"
)

// Experiment kinds, reported through Tracer.Action.
const (
	// Action: Detail says what was done ("cut every watch connection", "POST foos
	// default/a"); Type is "fault" for an injected fault, "change" for anything else.
	Action Kind = "action"
)

// Log kinds, reported by the handler CaptureLogs returns.
const (
	// Logged: one log record. Source is the program that logged it (CaptureLogs's
	// source), Type its level ("INFO", "WARN", "ERROR", "DEBUG", or "WARN+2" between
	// them), Detail its message, Attrs its attributes.
	Logged Kind = "logged"
)

// Event is one thing one stage did. Which fields are set depends on Kind (see each
// Kind's comment); the rest are zero.
type Event struct {
	// Time is when the stage reported it.
	Time time.Time
	// Stage and Kind say who reported what.
	Stage Stage
	Kind  Kind
	// Source is the reporting component's name: the informer's or reflector's (the
	// resource), the handler's, the workqueue's.
	Source string
	// Informer is, on a Listener event, the informer (its Source, the resource) whose
	// handler Source is: a journey follows an object through the handlers of its
	// own informer only. Empty on every other stage's events.
	Informer string
	// Key is the object's namespace/name, or the workqueue item.
	Key string
	// ResourceVersion is the object's, or the one a LIST or WATCH asked for or reached.
	ResourceVersion string
	// Type is the change: a watch event type, a delta type, an informer action.
	Type string
	// Reason says why: why a watch ended, why the reflector relists, what Add did.
	Reason string
	// Detail is free text, such as the index values an update changed.
	Detail string
	// Attrs is a log record's attributes (Logged only), as slog's TextHandler writes
	// them: `handler=slow backlog=1000 err="watch closed"`, groups as dotted keys.
	Attrs string

	// Items: objects in a LIST or a Replace.
	Items int
	// Paged: the LIST came back in several pages.
	Paged bool
	// Tombstones: deletes a Replace inferred.
	Tombstones int
	// Pending: deltas waiting for the key (Queued), or popped together (Popped).
	Pending int
	// QueueLen: the queue's length after the event.
	QueueLen int
	// Listeners: handlers notified; Skipped: handlers left out of a resync.
	Listeners, Skipped int
	// Backlog: notifications waiting in one handler's buffer.
	Backlog int
	// Requeues: rate-limited adds of the key since its last Forget.
	Requeues int
	// Duration: a backoff, a delay, a wait in the queue, a handler call.
	Duration time.Duration
}
