package informer

import (
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/internal/fifo"
	"github.com/kubeinternals/informers/trace"
)

// notificationKind says which handler method a notification is for.
type notificationKind uint8

const (
	addNotification notificationKind = iota
	updateNotification
	deleteNotification
)

// notification is one handler call waiting in a listener's buffer.
type notification[T indexer.Object] struct {
	kind            notificationKind
	isInInitialList bool
	oldObj, newObj  T // add: newObj; update: both; delete: oldObj
	tombstone       *indexer.DeletedFinalStateUnknown[T]
}

// listener relays notifications from the informer to one handler. add never blocks:
// it appends to an unbounded buffer (internal/fifo), and the listener's own goroutine (run) pops
// and calls the handler. So a slow handler delays only itself, never the informer's
// processing loop or the other handlers — at the price of memory for its backlog,
// which Backlog and HighWater expose and which is logged when it passes a threshold.
//
// Simplified: client-go's processorListener uses three goroutines (pop, run,
// watchSynced) and two channels; one goroutine with a mutex-guarded buffer does the
// same job with no channel hop per notification.
//
// client-go: tools/cache/shared_informer.go processorListener
type listener[T indexer.Object] struct {
	handler ResourceEventHandler[T]
	logger  *slog.Logger
	// tracer (nil: off), name (the handler's, in its trace events), informer (the
	// informer's trace Source, in the same events) and metrics (nil: off) are
	// immutable once the listener is registered.
	tracer   *trace.Tracer
	name     string
	informer string
	metrics  *handlerMetrics
	// wake has capacity 1: add leaves a token so a sleeping run wakes up.
	wake chan struct{}
	// firstWarning is the backlog of the first falling-behind warning (0 or
	// negative: never). Immutable.
	firstWarning int
	// finished is closed once this listener will never call its handler again and
	// no call is in progress: when run returns, or — for a listener whose run never
	// started — when the processor removes it (removeListener).
	// ShutDownEventHandler waits for it.
	finished chan struct{}
	// goroutine is the id of run's goroutine, 0 until run starts. Written once, by
	// run itself, before its first handler call; ShutDownEventHandler compares it
	// with its caller's (calledFromHandler).
	goroutine atomic.Uint64

	mu sync.Mutex
	// pending holds notifications not yet handed to the handler, in blocks drawn
	// from the informer's pool (shared by its listeners). Guarded by mu.
	pending fifo.Queue[notification[T]]
	// closed: no more notifications are accepted and run exits. Guarded by mu.
	closed bool
	// highWater is the largest backlog seen. Guarded by mu.
	highWater int
	// warnAt is the backlog size at which the next warning is logged; it doubles
	// after each warning so a stuck handler logs O(log n) lines, and returns to
	// firstWarning when the backlog drains, so the next burst warns again.
	// Guarded by mu.
	warnAt int
	// sync tracks whether this handler has seen the initial list. Guarded by mu.
	sync syncTracker

	resyncMu sync.Mutex
	// requestedResyncPeriod is what the caller asked for (after the 1s minimum).
	// Guarded by resyncMu.
	requestedResyncPeriod time.Duration
	// resyncPeriod is the period in force: 0 when the informer does not resync.
	// Guarded by resyncMu.
	resyncPeriod time.Duration
	// nextResync is when this handler is next due a resync. Guarded by resyncMu.
	nextResync time.Time
}

func newListener[T indexer.Object](h ResourceEventHandler[T], logger *slog.Logger, requested, period time.Duration, warnAt int, blocks *fifo.Pool[notification[T]]) *listener[T] {
	l := &listener[T]{
		handler:               h,
		logger:                logger,
		name:                  "handler",
		wake:                  make(chan struct{}, 1),
		firstWarning:          warnAt,
		finished:              make(chan struct{}),
		pending:               fifo.Queue[notification[T]]{Pool: blocks},
		warnAt:                warnAt,
		sync:                  newSyncTracker(),
		requestedResyncPeriod: requested,
		resyncPeriod:          period,
	}
	l.nextResync = time.Now().Add(period)
	return l
}

// defaultBacklogWarning is Options.BacklogWarning's zero value: client-go's
// initialBufferSize, the backlog its listener's buffer holds before it first grows.
const defaultBacklogWarning = 1024

// add queues a notification; it never blocks.
func (l *listener[T]) add(n notification[T]) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	if n.kind == addNotification && n.isInInitialList {
		l.sync.start()
	}
	l.pending.Push(n)
	backlog := l.pending.Len()
	l.highWater = max(l.highWater, backlog)
	if l.metrics != nil {
		l.metrics.backlog.Set(float64(backlog))
		l.metrics.highWater.Set(float64(l.highWater))
	}
	warn := l.warnAt > 0 && backlog >= l.warnAt
	if warn {
		l.warnAt *= 2
	}
	if l.tracer != nil {
		e := l.event(trace.Buffered, &n)
		e.Backlog = backlog
		l.tracer.Emit(e)
	}
	l.mu.Unlock()
	if warn {
		l.logger.Warn("event handler is falling behind: its backlog keeps growing in memory", "backlog", backlog)
	}
	select {
	case l.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// run calls the handler for each notification in order until close, then closes
// finished.
//
// Owner: the sharedProcessor (started by run or addListener, counted in its wait
// group); exits when close is called, after the handler call in progress returns.
// Notifications still queued then are dropped, as in client-go: the informer is
// stopping, or the handler was removed.
func (l *listener[T]) run() {
	id := goroutineID()
	if id == 0 {
		// Not silent: ShutDownEventHandler's own-handler check rests on this id.
		l.logger.Error("cannot read this goroutine's id from runtime.Stack's header (did a Go release change it?); "+
			"ShutDownEventHandler will not recognise a call from this handler's own callbacks, which then waits until its ctx ends",
			"handler", l.name)
	}
	l.goroutine.Store(id)
	defer close(l.finished)
	for {
		l.mu.Lock()
		var n notification[T]
		ok := l.pending.Len() > 0
		if ok {
			n = l.pending.Pop()
			if l.metrics != nil {
				l.metrics.backlog.Set(float64(l.pending.Len()))
			}
		}
		caughtUp := !ok && l.warnAt > l.firstWarning
		if caughtUp {
			l.warnAt = l.firstWarning
		}
		closed, highWater := l.closed, l.highWater
		l.mu.Unlock()
		if closed {
			return
		}
		if caughtUp {
			l.logger.Info("event handler caught up: its backlog is empty again", "highWater", highWater)
		}
		if !ok {
			<-l.wake
			continue
		}
		l.call(n)
		if n.kind == addNotification && n.isInInitialList {
			l.mu.Lock()
			l.sync.finished()
			l.mu.Unlock()
		}
	}
}

// call invokes the handler, recovering a panic so that one bad handler or object
// stops neither this listener, the informer, nor the other handlers.
//
// Differences from client-go: client-go's HandleCrash re-panics by default (crashing
// the process), and when configured not to, sleeps 1s after each panic. We log the
// panic with the object's key and go on with the next notification.
func (l *listener[T]) call(n notification[T]) {
	var start time.Time
	if l.tracer != nil || l.metrics != nil {
		start = time.Now()
	}
	if l.tracer != nil {
		l.tracer.Emit(l.event(trace.HandlerCalled, &n))
	}
	defer func() {
		if l.metrics != nil {
			l.metrics.duration.Observe(time.Since(start).Seconds())
		}
		if r := recover(); r != nil {
			if l.metrics != nil {
				l.metrics.panics.Inc()
			}
			key := n.key()
			l.logger.Error("event handler panicked; skipping this notification", "key", key,
				"notification", n.kind.String(), "panic", fmt.Sprint(r), "stack", panicStack())
			if l.tracer != nil {
				e := l.event(trace.PanicRecovered, &n)
				e.Reason = fmt.Sprint(r)
				l.tracer.Emit(e)
			}
			return
		}
		if l.tracer != nil {
			e := l.event(trace.HandlerReturned, &n)
			e.Duration = time.Since(start)
			l.tracer.Emit(e)
		}
	}()
	switch n.kind {
	case addNotification:
		l.handler.OnAdd(n.newObj, n.isInInitialList)
	case updateNotification:
		l.handler.OnUpdate(n.oldObj, n.newObj)
	case deleteNotification:
		l.handler.OnDelete(DeletedObject[T]{OptionalObj: n.oldObj, FinalStateUnknown: n.tombstone})
	}
}

// event is the trace event of kind for notification n, for the caller to complete
// and emit. Called only when l.tracer is set.
func (l *listener[T]) event(kind trace.Kind, n *notification[T]) trace.Event {
	return trace.Event{Stage: trace.Listener, Kind: kind, Source: l.name, Informer: l.informer, Key: n.key(),
		ResourceVersion: n.object().GetResourceVersion(), Type: n.kind.String()}
}

func (k notificationKind) String() string {
	switch k {
	case addNotification:
		return "add"
	case updateNotification:
		return "update"
	default:
		return "delete"
	}
}

// close stops run; it is idempotent.
func (l *listener[T]) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// upstreamSynced records that the informer has synced: from now on this listener is
// synced as soon as its pending initial adds are handled.
func (l *listener[T]) upstreamSynced() {
	l.mu.Lock()
	l.sync.upstreamSynced()
	l.mu.Unlock()
}

// holdSync keeps the listener from counting as synced until releaseSync, however
// many of its initial adds it has handled: a late registration holds it while its
// replay is being queued.
func (l *listener[T]) holdSync() {
	l.mu.Lock()
	l.sync.start()
	l.mu.Unlock()
}

// releaseSync ends holdSync.
func (l *listener[T]) releaseSync() {
	l.mu.Lock()
	l.sync.finished()
	l.mu.Unlock()
}

// shouldResync reports whether this listener is due a resync at now.
//
// client-go: tools/cache/shared_informer.go processorListener.shouldResync
func (l *listener[T]) shouldResync(now time.Time) bool {
	l.resyncMu.Lock()
	defer l.resyncMu.Unlock()
	return l.resyncPeriod != 0 && !now.Before(l.nextResync)
}

// determineNextResync schedules the next resync one period after now.
func (l *listener[T]) determineNextResync(now time.Time) {
	l.resyncMu.Lock()
	defer l.resyncMu.Unlock()
	l.nextResync = now.Add(l.resyncPeriod)
}

func (l *listener[T]) setResyncPeriod(p time.Duration) {
	l.resyncMu.Lock()
	defer l.resyncMu.Unlock()
	l.resyncPeriod = p
}

// maxPanicStack bounds the stack trace a recovered panic logs: a deep recursion must
// not turn into a log line of megabytes.
//
// client-go: apimachinery/pkg/util/runtime/runtime.go logPanic (the same 64 KiB)
const maxPanicStack = 64 << 10

// panicStack is the stack of the calling goroutine, truncated at maxPanicStack. Called
// from the deferred recover in call, it starts at runtime's panic and goes through the
// handler's frames: where the handler panicked.
//
// client-go: apimachinery/pkg/util/runtime/runtime.go logPanic
func panicStack() string {
	buf := make([]byte, maxPanicStack)
	return string(buf[:runtime.Stack(buf, false)])
}
