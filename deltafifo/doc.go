// Package deltafifo holds the queue between the reflector and the informer: what
// the watch saw goes in, in order, and one consumer goroutine pops it and applies it
// to the cache. Two queues are provided, both satisfying Queue:
//
//   - RealFIFO, the queue every client-go 1.37 informer uses, and this module's
//     informers unless told otherwise (informer.RealFIFOQueue is the zero
//     QueueKind): one entry per event, in arrival order; a relist is a single
//     ReplacedAll delta and the consumer infers the deletes. It also batches
//     (BatchQueue).
//   - DeltaFIFO, the classic queue most of the literature describes (client-go's
//     informers ran on it until 1.32; informer.DeltaFIFOQueue chooses it): one entry
//     per key holding every change (Deltas) since the key was last popped. It
//     consults the consumer's cache (KnownObjects) to infer deletes that a relist
//     reveals.
//
// # Where this sits
//
//	kube-apiserver
//	    │ LIST / WATCH
//	    ▼
//	reflector ──Add/Update/Delete/Replace/Resync/Bookmark──▶ ┏━━━━━━━━━━━━━━━━━━━━━━━┓
//	                                                         ┃ deltafifo (this pkg)  ┃
//	                                                         ┃ RealFIFO or DeltaFIFO ┃
//	                                                         ┗━━━━━━━━━━━┯━━━━━━━━━━━┛
//	                                                                     │ PopBatch / Pop
//	                                                                     ▼
//	                                   informer processLoop ──▶ indexer (the cache)
//	                                                                     │
//	                                                                     ▼
//	                                                         event handlers, workqueue
//
// # Invariants
//
//   - A popped Delta's Object is never the zero T for a per-object delta. A delete
//     inferred by a relist has Delta.Tombstone set (a typed
//     indexer.DeletedFinalStateUnknown) and Object equal to the tombstone's Obj, so
//     no handler ever type-asserts a tombstone into an object.
//   - DeltaFIFO: a key is queued at most once; a new key goes to the tail and a
//     queued key keeps its place; its Deltas are oldest first and never empty.
//   - RealFIFO: deltas leave in the order they arrived; at most one process call
//     runs at a time.
//   - HasSynced never turns false again, and Synced is closed exactly once, after the
//     consumer has processed the first list (see initialSync in synced.go).
//   - A ctx cancellation never leaves a goroutine behind (see ctxWaiter in pop.go).
//   - Each queue's transform runs once per object, when it is queued — never on
//     Sync deltas or tombstones, whose objects came from the queue or the cache and
//     were transformed already. It should be idempotent anyway: a caller that passes
//     objects taken from the cache to Replace would transform them a second time.
//
// # Reading order
//
//  1. delta.go — DeltaType, Delta, Info, Deltas: the vocabulary.
//  2. queue.go — Queue, BatchQueue, KnownObjects, the process funcs and errors.
//  3. synced.go — how HasSynced is decided (initialSync).
//  4. delta_fifo.go — DeltaFIFO, its options, Add/Update/Delete, dedup.
//  5. delta_fifo_replace.go — Replace (tombstones, kubernetes/kubernetes#83810) and Resync.
//  6. pop.go, then delta_fifo_pop.go — blocking Pop with ctx, slow-handler warnings.
//  7. real_fifo.go, then real_fifo_pop.go — RealFIFO and its batched, unlocked Pop.
//  8. trace.go — with a Tracer in the options, both queues report every delta
//     queued (and coalesced), each Replace, dropped delete and pop (package trace).
//  9. metrics.go — with QueuedItems in the options, both queues set it to their
//     length under their lock after every change (an informer's queued-items metric).
//
// # Why client-go moved its informers from DeltaFIFO to RealFIFO
//
// In client-go 1.37 the InOrderInformers gate is GA and locked on, and AtomicFIFO,
// UnlockWhileProcessingFIFO and InOrderInformersBatchProcess are beta and on: every
// informer runs on an atomic RealFIFO; DeltaFIFO is only used when built directly.
// The reasons can be read off the two designs:
//
//   - Order across objects. DeltaFIFO groups an object's events at the position of
//     its first one. After "add a, add b, delete a" it delivers a's add and delete,
//     then b's add. The cluster went {a} → {a, b} → {b}; the cache goes
//     {a} → {} → {b}: it never holds {a, b}, and it holds {}, which never existed
//     (TestQueueOrderAcrossKeys). A handler that
//     reasons about several objects — "a Service and its EndpointSlices" — can
//     observe combinations that never existed ("ordering guarantees are unclear",
//     kubernetes/kubernetes#27984). RealFIFO delivers events in arrival order.
//   - An atomic relist. DeltaFIFO spreads a relist over one Replaced delta per
//     object plus one tombstone per vanished key, queued behind whatever is already
//     pending; while they drain, the cache is part old list, part new. RealFIFO
//     queues one ReplacedAll, which the consumer applies to its store in one step.
//   - No reading of the cache inside the queue. DeltaFIFO needs KnownObjects to
//     infer deletes, and therefore holds its lock while the consumer updates the
//     cache (else a Replace could run between a pop and the cache update and miss
//     the object in both). So a slow process function blocks the reflector, and the
//     watch backs up (kubernetes/kubernetes#103789); in a shared informer that
//     function updates the cache and hands changes to the listeners, and handlers
//     run on the listeners' goroutines, never inside Pop. RealFIFO does not read the cache, so
//     it can release its lock while the consumer works; it keeps it only once two
//     batches are queued, which slows the producer down to the consumer's pace.
//   - Memory on relist. A DeltaFIFO relist allocates a Delta for every object in
//     every key's Deltas, and if the consumer lags behind repeated relists each key
//     collects one more per relist. A ReplacedAll is one delta pointing at the list
//     the reflector already decoded.
//
// What RealFIFO gives up is DeltaFIFO's grouping by key: a hot object updated 100
// times while queued is one entry and one pop in DeltaFIFO (100 deltas in one
// Deltas), and 100 entries in RealFIFO. It is not less work downstream: an informer
// applies and distributes every delta either way (informer/deltas.go handleDeltas),
// so handlers see 100 updates with either queue; the only deltas DeltaFIFO drops are
// a second Deleted in a row (dedupDeltas). Keys are coalesced later, by the
// workqueue. PopBatch recovers most of RealFIFO's per-pop cost by handing the
// consumer runs of deltas with distinct keys, which it can apply under one lock.
//
// # Differences from client-go
//
//   - Typed objects and tombstones (see Invariants). When a Replace finds a key in
//     KnownObjects that GetByKey then cannot return, client-go queues a tombstone
//     with a nil Obj; we log and skip it (Simplified, in DeltaFIFO.Replace).
//   - Pop takes a context, returns only an error (not the popped item), and rejects
//     a nil process func. A ctx done on entry pops nothing.
//   - DeltaFIFO always emits Replaced on Replace, as client-go's informers configure
//     theirs (newQueueFIFO sets EmitDeltaTypeReplaced); client-go's option is off by
//     default, so its DeltaFIFO built directly emits Sync instead. Ours has no
//     option. It has a no-op Bookmark so that it satisfies Queue.
//   - DeltaFIFO.Replace computes all keys before queueing, so an item without a key
//     leaves the queue unchanged (client-go's queues the items before it first), and
//     queues tombstones for queued keys in queue order. A transform that fails
//     partway leaves the items before it queued, as client-go's does.
//   - DeltaFIFO's Synced channel closes after the last initial item is processed;
//     client-go closes its Done channel just before, so a waiter could read a cache
//     still missing that item. HasSynced reads the channel and takes no lock.
//   - RealFIFO is client-go's atomic mode only, with UnlockWhileProcessing always
//     on and no KnownObjects; concurrent Pops are serialized instead of running
//     process at once; PopBatch takes one func instead of a batch and a single func;
//     keys are computed once at enqueue; a nil item in Replace is an error.
//   - No metrics provider or informer identity: one optional gauge, QueuedItems in
//     the options, which both queues set to their length under their lock after every
//     write and pop (client-go's RealFIFO sets its numberOfQueuedItem under its lock
//     too; its DeltaFIFO records none); an informer passes its queued-items metric
//     there. Slow
//     handlers are reported with slog instead of utiltrace. No KeyError type:
//     errors wrap ErrKey, ErrTransform or ErrClosed.
package deltafifo
