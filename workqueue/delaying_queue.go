package workqueue

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/kubeinternals/informers/trace"
)

// DelayingInterface is a work queue that can also add an item after a delay, so that a
// failed item is retried later instead of in a hot loop.
//
// client-go: util/workqueue/delaying_queue.go TypedDelayingInterface
type DelayingInterface[T comparable] interface {
	Interface[T]
	// AddAfter adds item once delay has passed; a delay <= 0 adds it now.
	AddAfter(item T, delay time.Duration)
}

// DelayingQueue is a Queue with AddAfter. Items that are not due yet wait in a min-heap
// keyed by the time they are due; one timer, armed for the earliest of them, moves due
// items into the queue. Build it with NewDelayingQueue.
//
// Differences from client-go: client-go runs a waitingLoop goroutine that AddAfter
// feeds through a channel of capacity 1000, re-checked at least every 10 s by a
// heartbeat ticker. We keep the heap under a mutex and arm a single time.AfterFunc
// timer for its head, so:
//   - no goroutine exists while nothing is due (the timer's callback is a short call,
//     not a loop), and the constructor starts none;
//   - AddAfter never blocks on a full channel and never allocates in steady state;
//   - the heartbeat is unnecessary: the timer is re-armed every time the head changes.
//
// client-go: util/workqueue/delaying_queue.go delayingType
type DelayingQueue[T comparable] struct {
	Queue[T]

	// waitMu guards the fields below.
	// Invariant (lock order): waitMu is taken before Queue.mu, never after: the timer
	// callback adds due items to the queue while holding waitMu, and nothing holding
	// Queue.mu touches the waiting items.
	waitMu sync.Mutex
	// waiting is guarded by waitMu: the items whose time has not come yet.
	waiting waitSet[T]
	// timer is guarded by waitMu. Created by the first AddAfter that needs it, it runs
	// fire when the earliest waiting item is due.
	timer *time.Timer
	// timerAt is guarded by waitMu: when the timer will run fire, in nanoseconds since
	// epoch; notArmed when it will not.
	// Invariant (whenever waitMu is free): while anything is waiting, timerAt is no
	// later than the earliest readyAt, so no item waits past its time.
	timerAt int64
	// stopped is guarded by waitMu: set by ShutDown and ShutDownWithDrain. Once true,
	// AddAfter is ignored and the timer is never armed again.
	stopped bool

	// epoch is immutable: the instant that readyAt and timerAt count from. Offsets
	// from it are measured on the monotonic clock, so wall-clock jumps do not matter.
	epoch time.Time
	// due is guarded by waitMu: fire's scratch list of items that fell due, kept to
	// reuse its backing array.
	due []T
	// retries is nil without a MetricsProvider; immutable after construction.
	retries CounterMetric
}

// notArmed is timerAt's value when the timer will not run.
const notArmed = math.MaxInt64

var _ DelayingInterface[string] = (*DelayingQueue[string])(nil)

// NewDelayingQueue returns an empty delaying queue. It starts no goroutine.
//
// client-go: util/workqueue/delaying_queue.go NewTypedDelayingQueueWithConfig
func NewDelayingQueue[T comparable](opts Options) *DelayingQueue[T] {
	q := &DelayingQueue[T]{}
	q.init(opts)
	return q
}

// init sets up a DelayingQueue in place; RateLimitingQueue embeds one by value.
func (q *DelayingQueue[T]) init(opts Options) {
	q.Queue.init(opts)
	q.waiting = newWaitSet[T]()
	q.timerAt = notArmed
	q.epoch = time.Now()
	if opts.MetricsProvider != nil {
		q.retries = orNoop[CounterMetric](opts.MetricsProvider.NewRetriesMetric(opts.Name))
	}
}

// AddAfter adds item to the queue once delay has passed. A delay <= 0 is a plain Add.
// If item is already waiting, AddAfter can only bring its time forward: the earlier of
// the two times wins. It is ignored once the queue is shutting down. Each call that is
// not ignored counts as a retry in the metrics.
//
// Pitfall: an item that is waiting can still be added directly with Add; it is then
// processed now and again when its time comes (as in client-go).
//
// client-go: util/workqueue/delaying_queue.go delayingType.AddAfter
func (q *DelayingQueue[T]) AddAfter(item T, delay time.Duration) {
	q.addAfter(item, delay, trace.AddedAfter, 0)
}

// addAfter is AddAfter, reported to the tracer as kind (AddedAfter, or RateLimited
// with the item's requeue count).
func (q *DelayingQueue[T]) addAfter(item T, delay time.Duration, kind trace.Kind, requeues int) {
	q.waitMu.Lock()
	if q.stopped {
		q.waitMu.Unlock()
		return
	}
	if q.tracer != nil {
		q.tracer.Emit(trace.Event{Stage: trace.Workqueue, Kind: kind, Source: q.name,
			Key: trace.KeyOf(item), Duration: max(delay, 0), Requeues: requeues})
	}
	if q.retries != nil {
		q.retries.Inc()
	}
	if delay <= 0 {
		q.waitMu.Unlock()
		q.Queue.Add(item)
		return
	}
	now := q.sinceEpoch()
	// Why release due items here too, not only when the timer fires: a burst of
	// AddAfter calls otherwise piles everything into the waiting set until the timer
	// goroutine gets the lock, and the set's heap and map grow to the whole burst
	// (BenchmarkDelayingQueueAddAfterDrain: 10,000 short delays). client-go's waiting
	// loop does the same: each new arrival first readies what is due.
	q.releaseDueLocked(now)
	if q.waiting.insert(item, addSaturating(now, delay)) {
		q.armLocked(now)
	}
	q.waitMu.Unlock()
}

// sinceEpoch returns the current instant as nanoseconds since q.epoch.
func (q *DelayingQueue[T]) sinceEpoch() int64 {
	return int64(time.Since(q.epoch))
}

// addSaturating returns now + delay, or MaxInt64 where that would overflow.
//
// Pitfall: a rate limiter may return a delay near MaxInt64 (a token bucket that is
// hopelessly behind); a plain addition would wrap negative and make the item due at
// once.
func addSaturating(now int64, delay time.Duration) int64 {
	if int64(delay) > math.MaxInt64-now {
		return math.MaxInt64
	}
	return now + int64(delay)
}

// armLocked makes sure the timer runs fire no later than the earliest readyAt.
func (q *DelayingQueue[T]) armLocked(now int64) {
	readyAt, ok := q.waiting.next()
	if !ok || readyAt >= q.timerAt {
		return // Nothing waits, or the timer is already armed early enough.
	}
	wait := time.Duration(readyAt - now)
	if q.timer == nil {
		// Goroutine owner: the time package runs fire in its own goroutine each time the
		// timer expires; each run returns after one pass. ShutDown stops the timer and
		// sets stopped, so no run starts after it, and one already started returns.
		q.timer = time.AfterFunc(wait, q.fire)
	} else {
		q.timer.Reset(wait)
	}
	q.timerAt = readyAt
}

// fire moves every due item into the queue, in readyAt order, and re-arms the timer for
// the next one.
//
// Why collect first, then add under one lock of Queue.mu: the heap work happens without
// holding up the workers, and when many items fall due together the workers do not
// fight the timer for the lock once per item.
//
// Why a spurious run is harmless: if AddAfter re-armed the timer while a run was
// starting, one run finds nothing due; it only re-arms the timer.
//
// client-go: util/workqueue/delaying_queue.go delayingType.waitingLoop
func (q *DelayingQueue[T]) fire() {
	q.waitMu.Lock()
	defer q.waitMu.Unlock()
	q.timerAt = notArmed
	if q.stopped {
		return
	}
	now := q.sinceEpoch()
	q.releaseDueLocked(now)
	q.armLocked(now)
}

// releaseDueLocked moves every waiting item due at now into the queue. waitMu is held.
func (q *DelayingQueue[T]) releaseDueLocked(now int64) {
	for {
		item, ok := q.waiting.popDue(now)
		if !ok {
			break
		}
		q.due = append(q.due, item)
	}
	if len(q.due) > 0 {
		q.mu.Lock()
		for _, item := range q.due {
			q.addLocked(item)
		}
		q.mu.Unlock()
		clear(q.due) // Why: drop the references so the items can be collected.
		q.due = q.due[:0]
	}
}

// ShutDown stops the timer, drops the items still waiting, and shuts the queue down
// (see Queue.ShutDown).
//
// client-go: util/workqueue/delaying_queue.go delayingType.ShutDown
func (q *DelayingQueue[T]) ShutDown() {
	q.stopWaiting()
	q.Queue.ShutDown()
}

// ShutDownWithDrain stops the timer, drops the items still waiting, and drains the
// queue (see Queue.ShutDownWithDrain).
//
// Differences from client-go: client-go does not override ShutDownWithDrain, so its
// waiting loop and heartbeat run until the loop next wakes up and sees the shutdown.
func (q *DelayingQueue[T]) ShutDownWithDrain(ctx context.Context) error {
	if ctx == nil {
		return q.Queue.ShutDownWithDrain(ctx) // Reports the nil context; shuts nothing down.
	}
	q.stopWaiting()
	return q.Queue.ShutDownWithDrain(ctx)
}

// stopWaiting is the delaying half of shutdown. Waiting items are dropped rather than
// added: after shutdown, Add would ignore them anyway.
func (q *DelayingQueue[T]) stopWaiting() {
	q.waitMu.Lock()
	if q.stopped {
		q.waitMu.Unlock()
		return
	}
	q.stopped = true
	if q.timer != nil {
		q.timer.Stop()
	}
	q.timerAt = notArmed
	dropped := q.waiting.len()
	q.waiting.clear()
	q.waitMu.Unlock()
	if dropped > 0 {
		q.logger.Debug("workqueue: shutdown dropped items that were waiting for their delay",
			"queue", q.name, "dropped", dropped)
	}
}
