package informer

import (
	"errors"
	"sync"
	"time"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/internal/fifo"
	"github.com/kubeinternals/informers/trace"
)

// ErrStopped is returned when a handler is added to an informer that has stopped.
var ErrStopped = errors.New("informer has stopped")

// ErrDuplicateHandlerName is returned when a handler is added under a name another
// handler of the same informer has (HandlerOptions.Name).
var ErrDuplicateHandlerName = errors.New("handler name already in use")

// sharedProcessor fans each notification out to every registered listener.
//
// client-go: tools/cache/shared_informer.go sharedProcessor
type sharedProcessor[T indexer.Object] struct {
	mu sync.RWMutex
	// listeners maps each listener to whether it is due the resync now being
	// delivered ("syncing"). Guarded by mu.
	listeners map[*listener[T]]bool
	// started: listener goroutines are running; new listeners start at once.
	// Guarded by mu.
	started bool
	// stopped: run has returned; no listener can be added. Guarded by mu.
	stopped bool
	// upstreamSynced: the informer has synced; listeners added later are told so
	// when they are added. Guarded by mu.
	upstreamSynced bool
	// blocks is where the listeners' buffers take their blocks from and give them
	// back to: a burst to one handler reuses what another has finished with.
	//
	// client-go has no counterpart: each processorListener's RingGrowing keeps the
	// largest buffer it ever needed.
	blocks fifo.Pool[notification[T]]
	// wg counts running listener goroutines.
	wg sync.WaitGroup
	// tracer (nil: off) and source (the informer's name) are immutable.
	tracer *trace.Tracer
	source string
}

func newSharedProcessor[T indexer.Object](tracer *trace.Tracer, source string) *sharedProcessor[T] {
	return &sharedProcessor[T]{listeners: map[*listener[T]]bool{}, tracer: tracer, source: source}
}

// addListener registers l and, if the processor runs, starts its goroutine.
func (p *sharedProcessor[T]) addListener(l *listener[T]) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return ErrStopped
	}
	p.listeners[l] = true
	if p.upstreamSynced {
		l.upstreamSynced()
	}
	if p.started {
		p.startLocked(l)
	}
	return nil
}

// hasName reports whether a registered listener is called name.
func (p *sharedProcessor[T]) hasName(name string) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for l := range p.listeners {
		if l.name == name {
			return true
		}
	}
	return false
}

// startLocked starts l's goroutine; p.mu must be held.
func (p *sharedProcessor[T]) startLocked(l *listener[T]) {
	p.wg.Add(1)
	// Owner: the processor. Exits when l.close is called (removeListener or stop).
	go func() {
		defer p.wg.Done()
		l.run()
	}()
}

// removeListener unregisters l and stops its goroutine, and reports whether l was
// registered. Unknown listeners are a no-op, so removing twice is fine. A listener
// whose goroutine never started is finished at once: nothing will ever run it.
//
// client-go: tools/cache/shared_informer.go sharedProcessor.removeListener
func (p *sharedProcessor[T]) removeListener(l *listener[T]) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.listeners[l]; !ok {
		return false
	}
	delete(p.listeners, l)
	l.close()
	if !p.started {
		// Invariant: a listener's goroutine is started only while it is in
		// p.listeners and p.started is set, both under p.mu; so l's never was,
		// never will be, and finished has no other closer.
		close(l.finished)
	}
	return true
}

// markUpstreamSynced tells every listener, and every later one, that the informer
// has synced. It runs on Run's sync watcher, without blockDeltas: a late listener
// whose replay is still being queued is protected by its own hold (listener.holdSync).
func (p *sharedProcessor[T]) markUpstreamSynced() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.upstreamSynced = true
	for l := range p.listeners {
		l.upstreamSynced()
	}
}

// distribute hands n to every listener — or, for a resync notification (isSync),
// only to the listeners due a resync. It never blocks on a handler.
//
// Simplified: client-go's distribute first waits until the listeners have started,
// because its add blocks on a channel that only a running listener drains. Our add
// only appends to a buffer, so notifications before start simply wait there.
//
// client-go: tools/cache/shared_informer.go sharedProcessor.distribute
func (p *sharedProcessor[T]) distribute(n notification[T], isSync bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.tracer != nil {
		p.traceFanOutLocked(&n, isSync)
	}
	for l, syncing := range p.listeners {
		if !isSync || syncing {
			l.add(n)
		}
	}
}

// traceFanOutLocked reports the fan-out of n (trace.FannedOut) before it happens, so
// that the trace reads in causal order: fanned out, then each listener's buffered.
// p.mu is held (read).
func (p *sharedProcessor[T]) traceFanOutLocked(n *notification[T], isSync bool) {
	sent := 0
	for _, syncing := range p.listeners {
		if !isSync || syncing {
			sent++
		}
	}
	p.tracer.Emit(trace.Event{Stage: trace.Informer, Kind: trace.FannedOut, Source: p.source,
		Key: n.key(), ResourceVersion: n.object().GetResourceVersion(), Type: n.kind.String(),
		Listeners: sent, Skipped: len(p.listeners) - sent})
}

// run starts every listener, waits for done, then stops them all and waits for
// their goroutines.
//
// client-go: tools/cache/shared_informer.go sharedProcessor.run
func (p *sharedProcessor[T]) run(done <-chan struct{}) {
	p.mu.Lock()
	for l := range p.listeners {
		p.startLocked(l)
	}
	p.started = true
	p.mu.Unlock()

	<-done

	p.mu.Lock()
	for l := range p.listeners {
		l.close()
	}
	p.listeners = map[*listener[T]]bool{}
	p.stopped = true
	p.mu.Unlock()
	p.wg.Wait()
}

// shouldResync marks which listeners are due a resync at now and reports whether
// any is. The informer's reflector asks this before each periodic resync.
//
// client-go: tools/cache/shared_informer.go sharedProcessor.shouldResync
func (p *sharedProcessor[T]) shouldResync() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	anyDue := false
	for l := range p.listeners {
		due := l.shouldResync(now)
		p.listeners[l] = due
		if due {
			anyDue = true
			l.determineNextResync(now)
		}
	}
	return anyDue
}

// resyncCheckPeriodChanged re-derives every listener's period after the informer's
// check period was lowered (only possible before Run).
//
// client-go: tools/cache/shared_informer.go sharedProcessor.resyncCheckPeriodChanged
func (p *sharedProcessor[T]) resyncCheckPeriodChanged(check time.Duration) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for l := range p.listeners {
		l.resyncMu.Lock()
		requested := l.requestedResyncPeriod
		l.resyncMu.Unlock()
		l.setResyncPeriod(determineResyncPeriod(requested, check))
	}
}

// determineResyncPeriod is the period a handler gets: 0 if it wants none or the
// informer does not resync, and at least the informer's check period otherwise.
//
// client-go: tools/cache/shared_informer.go determineResyncPeriod
func determineResyncPeriod(desired, check time.Duration) time.Duration {
	switch {
	case desired == 0 || check == 0:
		return 0
	case desired < check:
		return check
	default:
		return desired
	}
}
