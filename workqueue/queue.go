package workqueue

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kubeinternals/informers/internal/fifo"
	"github.com/kubeinternals/informers/trace"
)

// Interface is the contract of a work queue: producers Add keys, workers Get a key,
// process it and call Done. Queue, DelayingQueue and RateLimitingQueue implement it.
//
// client-go: util/workqueue/queue.go TypedInterface
type Interface[T comparable] interface {
	// Add marks item as needing processing. It is ignored once the queue is shutting down.
	Add(item T)
	// Len is the number of items waiting for a worker (not those in processing).
	// It is for information only: by the time the caller reads it, it may be stale.
	Len() int
	// Get blocks until an item is available or the queue is shut down and empty.
	// shutdown=true means the caller should stop its worker.
	Get() (item T, shutdown bool)
	// Done marks the end of processing of an item returned by Get.
	Done(item T)
	// ShutDown makes the queue ignore new items; workers drain what is already queued
	// and then Get reports shutdown.
	ShutDown()
	// ShutDownWithDrain is ShutDown that also waits until every item in processing is
	// Done, or until ctx ends.
	ShutDownWithDrain(ctx context.Context) error
	// ShuttingDown reports whether ShutDown or ShutDownWithDrain has been called.
	ShuttingDown() bool
}

// Options configures NewQueue and NewDelayingQueue. The zero value is a queue without
// metrics that logs to slog.Default().
//
// Simplified: client-go's TypedQueueConfig also takes a Clock and a pluggable storage
// (Queue[T] with Touch/Push/Len/Pop). We use the time package — tests fake it with
// testing/synctest — and fixed FIFO storage; nothing in Kubernetes plugs in its own
// storage, and the FIFO is what the "fair" promise of the queue means.
type Options struct {
	// Name labels this queue's metrics and log lines.
	Name string
	// MetricsProvider creates this queue's metrics. Nil means no metrics, at zero cost.
	// A non-nil provider is used even if Name is empty (see MetricsProvider).
	MetricsProvider MetricsProvider
	// Logger receives warnings about misuse (Done of an item that is not processing) and
	// debug lines about shutdown. Nil means slog.Default(); to discard them, pass
	// slog.New(slog.DiscardHandler).
	Logger *slog.Logger
	// Tracer receives an event for every Add (new, deduplicated or marked dirty),
	// Get, Done, Forget, delayed and rate-limited add, and the shutdown. Nil: off, at
	// the cost of one pointer check per operation.
	Tracer *trace.Tracer
}

// Queue is a fair, deduplicating, concurrency-safe work queue. Build it with NewQueue;
// the zero value is not usable.
//
// Its three promises, and the field that keeps each:
//   - an item added many times before a worker gets it is processed once (dirty);
//   - no item is ever processed by two workers at once (processing);
//   - an item added while it is processing is processed again after Done
//     (dirtyProcessing, and Done).
//
// client-go: util/workqueue/queue.go Typed
type Queue[T comparable] struct {
	mu sync.Mutex
	// nonEmpty (L = &mu) wakes Get. Add and Done signal it when they put an item in the
	// queue; shutdown broadcasts it.
	nonEmpty sync.Cond
	// idle (L = &mu) wakes ShutDownWithDrain. Done broadcasts it when the last item in
	// processing is done during a drain; ShutDown broadcasts it to abort the drain.
	//
	// Why two conditions: client-go uses one and relies on no Get being asleep during a
	// drain. Two make each wake-up reach the waiter it is meant for.
	idle sync.Cond

	// queue is guarded by mu.
	// Invariant: it holds exactly the items that are dirty and not processing, each
	// once, oldest first. That is why a worker never gets an item that another worker
	// is processing.
	queue fifo.Queue[T]
	// dirty is guarded by mu: the items that need processing — those in queue, plus
	// those added again while processing, which Done will queue.
	// Invariant: an Add of an item already in dirty changes nothing.
	dirty map[T]struct{}
	// processing is guarded by mu: the items handed out by Get and not yet Done — at
	// most one per worker, so the map stays small.
	processing map[T]struct{}
	// dirtyProcessing is guarded by mu: how many items are in both dirty and processing.
	// Why: dirty is as large as the backlog, and a lookup in a large map is likely a
	// cache miss. When this count is zero — the common case — Done knows without a
	// lookup that the item was not added again. So a cycle costs three operations on
	// dirty (client-go's costs four) and four on the small, cache-resident processing.
	dirtyProcessing int
	// shuttingDown is guarded by mu. Once true it stays true: Add is ignored, and Get
	// returns shutdown=true as soon as the queue is empty.
	shuttingDown bool
	// draining is guarded by mu: true while a ShutDownWithDrain waits; ShutDown clears it
	// to abort that wait.
	draining bool

	// stop is closed exactly once, under mu, when shuttingDown becomes true. It ends the
	// metrics refresher.
	stop chan struct{}
	// refresherStarted is guarded by mu.
	refresherStarted bool
	// refresher tracks the metrics refresher goroutine, so that ShutDown can wait for it.
	refresher sync.WaitGroup

	// metrics is nil when Options.MetricsProvider is nil. The pointer is immutable; the
	// maps inside are guarded by mu.
	metrics *queueMetrics[T]
	// logger and name are immutable after construction.
	logger *slog.Logger
	name   string
	// tracer is immutable; nil means tracing is off.
	tracer *trace.Tracer
	// addedAt is guarded by mu and used only when tracer is set: when each dirty item
	// became dirty, so that Get can report how long it waited.
	addedAt map[T]time.Time
}

var _ Interface[string] = (*Queue[string])(nil)

// NewQueue returns an empty queue. It starts no goroutine: with a MetricsProvider, the
// goroutine that refreshes the unfinished-work gauges starts at the first Get and exits
// on ShutDown.
//
// client-go: util/workqueue/queue.go NewTypedWithConfig
func NewQueue[T comparable](opts Options) *Queue[T] {
	q := &Queue[T]{}
	q.init(opts)
	return q
}

// init sets up a Queue in place; DelayingQueue embeds a Queue by value and calls it.
func (q *Queue[T]) init(opts Options) {
	q.nonEmpty.L = &q.mu
	q.idle.L = &q.mu
	q.dirty = make(map[T]struct{})
	q.processing = make(map[T]struct{})
	q.stop = make(chan struct{})
	q.logger = cmp.Or(opts.Logger, slog.Default())
	q.name = opts.Name
	if opts.Tracer != nil {
		q.tracer = opts.Tracer
		q.addedAt = make(map[T]time.Time)
	}
	q.metrics = newQueueMetrics[T](opts.MetricsProvider, opts.Name)
}

// Add marks item as needing processing. Adding an item that is already waiting does
// nothing; adding an item that is processing makes Done queue it again.
//
// client-go: util/workqueue/queue.go Typed.Add
func (q *Queue[T]) Add(item T) {
	q.mu.Lock()
	q.addLocked(item)
	q.mu.Unlock()
}

// addLocked is Add with mu held.
func (q *Queue[T]) addLocked(item T) {
	if q.shuttingDown {
		if q.tracer != nil {
			q.traceAddLocked(item, "shutting down")
		}
		return
	}
	if _, ok := q.dirty[item]; ok {
		// Already waiting (or already due for a second round): the pending processing
		// will see the latest state of the object, so once is enough.
		if q.tracer != nil {
			q.traceAddLocked(item, "deduplicated")
		}
		return
	}
	q.dirty[item] = struct{}{}
	if q.metrics != nil {
		q.metrics.addedLocked(item, time.Now())
	}
	if _, ok := q.processing[item]; ok {
		// Why not queue it now: a second worker could Get it while the first is still
		// working on it. Done queues it.
		q.dirtyProcessing++
		if q.tracer != nil {
			q.traceAddLocked(item, "dirty")
		}
		return
	}
	q.queue.Push(item)
	q.nonEmpty.Signal()
	if q.tracer != nil {
		q.traceAddLocked(item, "new")
	}
}

// traceGotLocked reports a Get (trace.Got) with how long item waited.
func (q *Queue[T]) traceGotLocked(item T) {
	now := time.Now()
	q.tracer.Emit(trace.Event{Time: now, Stage: trace.Workqueue, Kind: trace.Got, Source: q.name,
		Key: trace.KeyOf(item), Duration: now.Sub(q.addedAt[item]), QueueLen: q.queue.Len()})
	delete(q.addedAt, item)
}

// traceDoneLocked reports a Done (trace.Done), "requeued" if item was dirty.
func (q *Queue[T]) traceDoneLocked(item T, requeued bool) {
	e := trace.Event{Stage: trace.Workqueue, Kind: trace.Done, Source: q.name, Key: trace.KeyOf(item), QueueLen: q.queue.Len()}
	if requeued {
		e.Reason = "requeued"
	}
	q.tracer.Emit(e)
}

// traceAddLocked reports what Add did with item (trace.Added), and remembers when a
// new or dirty item started waiting. Callers check q.tracer first.
func (q *Queue[T]) traceAddLocked(item T, outcome string) {
	now := time.Now()
	if outcome == "new" || outcome == "dirty" {
		q.addedAt[item] = now
	}
	q.tracer.Emit(trace.Event{Time: now, Stage: trace.Workqueue, Kind: trace.Added, Source: q.name,
		Key: trace.KeyOf(item), Reason: outcome, QueueLen: q.queue.Len()})
}

// Len returns the number of items waiting for a worker. Items in processing are not
// counted, nor are items that a DelayingQueue holds back. Do not gate Add or Get on it:
// it can change as soon as it is read.
//
// client-go: util/workqueue/queue.go Typed.Len
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queue.Len()
}

// Get blocks until it can hand out the oldest waiting item, which is then processing
// until the caller passes it to Done. It returns shutdown=true only when the queue is
// shutting down and nothing is left to hand out, so ShutDown lets workers drain.
//
// client-go: util/workqueue/queue.go Typed.Get
func (q *Queue[T]) Get() (item T, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.queue.Len() == 0 && !q.shuttingDown {
		q.nonEmpty.Wait()
	}
	if q.queue.Len() == 0 {
		return item, true
	}
	item = q.queue.Pop()
	// Invariant: an item in the queue is dirty and not processing; it now becomes
	// processing and not dirty. A later Add makes it dirty again, and Done sees that.
	delete(q.dirty, item)
	q.processing[item] = struct{}{}
	if q.metrics != nil {
		q.metrics.gotLocked(item, time.Now())
		q.startRefresherLocked()
	}
	if q.tracer != nil {
		q.traceGotLocked(item)
	}
	return item, false
}

// Done ends the processing of item. If item was added while it was processing, it goes
// to the back of the queue now. Calling Done for an item that is not processing (twice,
// or without Get) is ignored and logged as a warning.
//
// Pitfall: a worker that forgets Done keeps its item processing forever: that item is
// never handed out again, and ShutDownWithDrain waits for it until its ctx ends.
//
// client-go: util/workqueue/queue.go Typed.Done
func (q *Queue[T]) Done(item T) {
	q.mu.Lock()
	if _, ok := q.processing[item]; !ok {
		q.mu.Unlock()
		// Why ignore it: client-go pushes a dirty item again here, so a stray Done puts
		// a waiting item in its queue twice, and two workers can then process it at once.
		q.logger.Warn("workqueue: Done for an item that is not processing; ignored",
			"queue", q.name, "item", item)
		return
	}
	delete(q.processing, item)
	if q.metrics != nil {
		q.metrics.doneLocked(item, time.Now())
	}
	requeued := false
	if q.dirtyProcessing > 0 {
		if _, ok := q.dirty[item]; ok {
			q.dirtyProcessing--
			q.queue.Push(item)
			q.nonEmpty.Signal()
			requeued = true
		}
	}
	if q.tracer != nil {
		q.traceDoneLocked(item, requeued)
	}
	if len(q.processing) == 0 && q.draining {
		q.idle.Broadcast()
	}
	q.mu.Unlock()
}

// ShutDown makes the queue ignore further Adds. Items already waiting are still handed
// out; once none are left, Get returns shutdown=true. It also stops a ShutDownWithDrain
// that is waiting, and waits for the metrics refresher to exit. It may be called more
// than once.
//
// client-go: util/workqueue/queue.go Typed.ShutDown
func (q *Queue[T]) ShutDown() {
	q.mu.Lock()
	q.shutDownLocked("")
	q.draining = false
	q.idle.Broadcast()
	q.mu.Unlock()
	q.refresher.Wait()
}

// ShutDownWithDrain shuts the queue down like ShutDown, then waits until every item in
// processing is Done. It returns nil once nothing is processing; an error wrapping
// context.Cause(ctx) if ctx ends first; an error wrapping ErrDrainAborted if ShutDown
// is called meanwhile. Either way the queue stays shut down.
//
// Pitfall: it waits for the items in processing, not for those still queued (as in
// client-go): workers must keep calling Get until it reports shutdown, or the queued
// items are simply never processed.
//
// Differences from client-go: client-go takes no context and blocks forever if a
// worker never calls Done; the context bounds the wait.
//
// client-go: util/workqueue/queue.go Typed.ShutDownWithDrain
func (q *Queue[T]) ShutDownWithDrain(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: ShutDownWithDrain needs a non-nil context", ErrInvalidArgument)
	}
	q.mu.Lock()
	q.shutDownLocked("drain")
	q.draining = true
	err := q.waitIdleLocked(ctx)
	q.mu.Unlock()
	q.refresher.Wait()
	return err
}

// waitIdleLocked waits on idle until processing is empty, the drain is aborted or ctx
// ends. mu is held on entry and on return (Wait releases it while asleep).
func (q *Queue[T]) waitIdleLocked(ctx context.Context) error {
	if len(q.processing) == 0 {
		return nil
	}
	q.logger.Debug("workqueue: draining", "queue", q.name, "processing", len(q.processing))
	// Why AfterFunc: a sync.Cond cannot select on ctx.Done, so a ctx that ends wakes
	// the waiter by broadcasting. Its goroutine is owned by the context package and
	// runs only if ctx ends; stopWake cancels it once we stop waiting.
	stopWake := context.AfterFunc(ctx, func() {
		q.mu.Lock()
		q.idle.Broadcast()
		q.mu.Unlock()
	})
	defer stopWake()
	for len(q.processing) > 0 && q.draining && ctx.Err() == nil {
		q.idle.Wait()
	}
	switch {
	case len(q.processing) == 0:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("workqueue %q: stopped draining with %d items processing: %w",
			q.name, len(q.processing), context.Cause(ctx))
	default:
		return fmt.Errorf("workqueue %q: %d items still processing: %w",
			q.name, len(q.processing), ErrDrainAborted)
	}
}

// shutDownLocked flips shuttingDown once, wakes every Get and ends the refresher.
// how is "drain" for ShutDownWithDrain, for the trace.
func (q *Queue[T]) shutDownLocked(how string) {
	if q.shuttingDown {
		return
	}
	q.shuttingDown = true
	if q.tracer != nil {
		q.tracer.Emit(trace.Event{Stage: trace.Workqueue, Kind: trace.ShutDown, Source: q.name, Reason: how, QueueLen: q.queue.Len()})
	}
	close(q.stop)
	q.nonEmpty.Broadcast()
}

// ShuttingDown reports whether ShutDown or ShutDownWithDrain has been called.
//
// client-go: util/workqueue/queue.go Typed.ShuttingDown
func (q *Queue[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}
