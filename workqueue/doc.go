// Package workqueue is the queue between an informer's event handlers and a
// controller's workers: handlers Add keys, workers Get a key, reconcile it and call
// Done. It rebuilds client-go v0.37.2's util/workqueue with type parameters
// (items are any comparable T, usually a string key or a small struct) and with the
// standard library only.
//
// # Where it sits
//
//	kube-apiserver
//	    │ LIST / WATCH
//	    ▼
//	reflector ──▶ deltafifo ──Pop──▶ informer ──▶ indexer (the cache)
//	                                     │ OnAdd/OnUpdate/OnDelete
//	                                     ▼
//	             your handler: enqueue a key ──▶ ★ workqueue.RateLimitingQueue ★
//	                                     │ Get / Done / Forget
//	                                     ▼
//	             worker: read the cache, reconcile, write via REST
//
// # What it promises
//
// A Queue is:
//   - fair: items are handed out in the order they became ready;
//   - stingy: an item added many times before a worker gets it is processed once —
//     handlers may enqueue the same key on every event without flooding the workers;
//   - exclusive: no item is ever processed by two workers at once; an item added while
//     it is processing is queued again only when Done is called for it, so the second
//     round sees the effect of the first;
//   - drainable: ShutDown ignores new items but lets workers finish the queued ones;
//     Get reports shutdown only once the queue is empty. ShutDownWithDrain also waits
//     for the items in processing.
//
// A DelayingQueue adds AddAfter; a RateLimitingQueue adds AddRateLimited, which asks a
// RateLimiter how long to wait (per-item exponential backoff, an overall token bucket,
// or the larger of both), plus Forget and NumRequeues. ParallelizeUntil, unrelated to
// queues, runs N independent pieces of work on a bounded number of goroutines.
//
// Invariants, each documented on the field that keeps it:
//   - Queue.queue holds exactly the items that are dirty and not processing, each once.
//   - Queue.dirtyProcessing counts the items that are both dirty and processing.
//   - DelayingQueue.timerAt is no later than the earliest waiting item while anything
//     is waiting; the lock order is DelayingQueue.waitMu before Queue.mu.
//   - waitSet: len(heap) == len(live) + stale, and after every insert
//     stale <= max(len(live), compactAbove).
//
// Goroutines: no constructor starts one. With a MetricsProvider, the first Get starts a
// refresher (owned by the Queue, ended by ShutDown, which waits for it). A
// DelayingQueue runs a timer callback only when an item is due; ShutDown stops it.
//
// # Reading order
//
//  1. internal/fifo — the FIFO storage: a chain of fixed-size blocks that grows
//     without copying, gives each block back once read, and in a steady cycle does
//     not allocate (shared with the informer's listeners).
//  2. queue.go — Queue: the dirty/processing state machine and shutdown.
//  3. waiting.go — the min-heap of items waiting for their time.
//  4. delaying_queue.go — DelayingQueue: AddAfter and the timer.
//  5. rate_limiters.go, bucket.go — RateLimiter and its implementations.
//  6. rate_limiting_queue.go — RateLimitingQueue: AddRateLimited, Forget, NumRequeues.
//  7. metrics.go — the MetricsProvider interface, client-go's metric names, the refresher.
//  8. parallelizer.go — ParallelizeUntil.
//  9. errors.go — the sentinel errors.
//
// With Options.Tracer set, the queues report what each Add did (new, deduplicated,
// dirty), delays, each Get with its wait, Done, Forget and shutdown (package trace).
//
// # Names
//
// client-go's TypedInterface, TypedDelayingInterface and TypedRateLimitingInterface
// are Interface, DelayingInterface and RateLimitingInterface here; the concrete types
// are Queue, DelayingQueue and RateLimitingQueue, built by NewQueue, NewDelayingQueue
// (both take Options) and NewRateLimitingQueue (RateLimitingOptions). client-go's
// untyped, deprecated `any` variants have no counterpart. The rate limiters keep their
// client-go names without the Typed prefix, and take an Options struct whose zero
// value is client-go's default.
//
// # Differences from client-go
//
//   - No clock injection: the package uses the time package, and tests fake time with
//     testing/synctest.
//   - No pluggable storage (client-go's Queue[T] Touch/Push/Len/Pop) and no injected
//     inner queues; see Options and RateLimitingQueue.
//   - Storage is a chain of blocks instead of a slice, so a steady Add/Get/Done cycle does
//     not allocate; and a counter of re-added items spares Done a lookup in the large
//     dirty set.
//   - Done for an item that is not processing is ignored (and logged); client-go would
//     queue a waiting item a second time.
//   - ShutDownWithDrain takes a context and returns an error; client-go blocks forever
//     if a worker never calls Done.
//   - Get takes no context, like client-go. Why: a worker's lifetime is the queue's;
//     the controller ends both with ShutDown when its own context ends:
//     go func() { <-ctx.Done(); q.ShutDown() }(). A Get that returned early on its own
//     context could leave items queued with no worker for them.
//   - DelayingQueue uses one time.AfterFunc timer instead of a goroutine, a channel of
//     1000 entries and a 10 s heartbeat.
//   - Metrics: no global SetProvider (its sync.Once silently drops a second provider);
//     each queue takes a MetricsProvider in Options, and a provider means metrics even
//     for an unnamed queue.
//   - ItemExponentialFailureRateLimiter computes in integers: it never returns the
//     negative delay client-go's float64 formula gives when base·2ⁿ is exactly 2^63 ns.
//   - Rate limiters and ParallelizeUntil return an error for bad input instead of
//     accepting it; the token bucket is our own (same arithmetic as
//     golang.org/x/time/rate, which client-go uses).
//   - ParallelizeUntil returns an error when ctx stopped it early, and re-panics a
//     worker's panic in the caller's goroutine.
package workqueue
