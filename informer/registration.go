package informer

import (
	"fmt"
	"time"

	"github.com/kubeinternals/informers/indexer"
)

// minimumResyncPeriod is the shortest resync period a handler can get.
const minimumResyncPeriod = time.Second

// HandlerOptions configures one registration.
type HandlerOptions struct {
	// ResyncPeriod overrides the informer's default for this handler: nil keeps the
	// default, 0 disables resync for it. Values under 1s are raised to 1s.
	ResyncPeriod *time.Duration
	// Name identifies the handler in logs, trace events and metrics, and must be
	// unique among the informer's registered handlers: AddEventHandlerWithOptions
	// refuses a name in use with ErrDuplicateHandlerName (two handlers of one name
	// would share one metrics series, and removing one would delete the survivor's).
	// A removed handler's name may be used again. "" means
	// "<informer name> handler <n>": the informer's Options.Name ("informer" when it
	// has none), n counting the informer's registrations from 1, never reused after a
	// removal, skipping a number whose name a handler already took.
	Name string
}

// Registration is the handle AddEventHandler returns: pass it to
// RemoveEventHandler, and ask it whether this handler has seen the initial list.
//
// client-go: tools/cache/shared_informer.go ResourceEventHandlerRegistration
type Registration[T indexer.Object] struct {
	informer *SharedIndexInformer[T]
	l        *listener[T]
}

// HasSynced reports whether the informer has synced and this handler has handled
// every object of the initial list (or, for a handler added later, of the replay).
//
// client-go: tools/cache/shared_informer.go processorListener.HasSynced
func (r *Registration[T]) HasSynced() bool {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	return r.l.sync.hasSynced()
}

// Synced is closed when HasSynced becomes true.
func (r *Registration[T]) Synced() <-chan struct{} { return r.l.sync.synced }

// Backlog is the number of notifications waiting for this handler now.
func (r *Registration[T]) Backlog() int {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	return r.l.pending.Len()
}

// HighWater is the largest backlog this handler has had: how far it fell behind.
func (r *Registration[T]) HighWater() int {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	return r.l.highWater
}

// syncState lets WaitForCacheSync report the informer's list errors for a registration.
func (r *Registration[T]) syncState() (<-chan struct{}, error) { return r.informer.errs.state() }

// syncName names the handler and its informer in WaitForCacheSync's errors and reports.
func (r *Registration[T]) syncName() string {
	return fmt.Sprintf("handler %q of %s", r.l.name, r.informer.syncName())
}

// AddEventHandler registers h with the informer's default resync period.
func (s *SharedIndexInformer[T]) AddEventHandler(h ResourceEventHandler[T]) (*Registration[T], error) {
	return s.AddEventHandlerWithOptions(h, HandlerOptions{})
}

// AddEventHandlerWithOptions registers h. Before Run, h will see the initial list as
// adds with isInInitialList=true. After Run, h first gets every object already in the
// cache replayed as adds with isInInitialList=true — queued while the processing loop
// is held, so h misses nothing and sees nothing twice — then the live changes. After
// the informer stopped it returns ErrStopped.
//
// client-go: tools/cache/shared_informer.go sharedIndexInformer.AddEventHandlerWithOptions
func (s *SharedIndexInformer[T]) AddEventHandlerWithOptions(h ResourceEventHandler[T], opts HandlerOptions) (*Registration[T], error) {
	if h == nil {
		return nil, fmt.Errorf("AddEventHandler: nil handler")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil, fmt.Errorf("AddEventHandler: %w", ErrStopped)
	}
	name := opts.Name
	if name != "" && s.processor.hasName(name) {
		return nil, fmt.Errorf("AddEventHandler: %w: %q (names are per informer; remove the other handler first, or choose another name)", ErrDuplicateHandlerName, name)
	}
	requested := s.opts.ResyncPeriod
	if opts.ResyncPeriod != nil {
		requested = *opts.ResyncPeriod
	}
	if requested > 0 && requested < minimumResyncPeriod {
		s.logger.Warn("resync period too small; raised to the minimum", "requested", requested, "minimum", minimumResyncPeriod)
		requested = minimumResyncPeriod
	}
	if requested > 0 && requested < s.resyncCheckPeriod {
		if s.started {
			s.logger.Warn("resync period below the informer's check period after start; raised to it",
				"requested", requested, "checkPeriod", s.resyncCheckPeriod)
			requested = s.resyncCheckPeriod
		} else {
			// Before Run the check period can still follow the fastest handler.
			s.resyncCheckPeriod = requested
			s.processor.resyncCheckPeriodChanged(requested)
		}
	}
	// An informer created with ResyncPeriod 0 never resyncs, whatever its handlers
	// ask (check period 0 → determineResyncPeriod gives 0), as in client-go.
	s.handlers++
	if name == "" {
		name = fmt.Sprintf("%s handler %d", traceSource(s.opts.Name), s.handlers)
		for s.processor.hasName(name) { // a handler took this name explicitly
			s.handlers++
			name = fmt.Sprintf("%s handler %d", traceSource(s.opts.Name), s.handlers)
		}
	}
	l := newListener(h, s.logger.With("handler", name), requested, determineResyncPeriod(requested, s.resyncCheckPeriod), s.opts.BacklogWarning, &s.processor.blocks)
	l.name, l.informer, l.tracer = name, traceSource(s.opts.Name), s.opts.Tracer
	l.metrics = newHandlerMetrics(s.opts.MetricsProvider, s.metrics.name(), name)
	reg := &Registration[T]{informer: s, l: l}

	if !s.started {
		return reg, s.processor.addListener(l)
	}
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	// Invariant: the listener cannot count as synced while its replay is being
	// queued. Its goroutine starts at once and may drain each replayed add as soon
	// as it is queued, and the informer may announce its sync at any moment (that
	// happens on Run's own goroutine, not under blockDeltas); either would let
	// "upstream synced, nothing pending" hold halfway through the replay. So the
	// replay itself counts as one pending initial add until it is fully queued.
	//
	// client-go's AddEventHandlerWithOptions gets the same guarantee by starting the
	// listener's watchSynced goroutine only after the replay is queued.
	l.holdSync()
	if err := s.processor.addListener(l); err != nil {
		return nil, fmt.Errorf("AddEventHandler: %w", err)
	}
	for _, obj := range s.indexer.List() {
		l.add(notification[T]{kind: addNotification, newObj: obj, isInInitialList: true})
	}
	l.releaseSync()
	return reg, nil
}

// RemoveEventHandler unregisters a handler and stops its goroutine; notifications
// still queued for it are dropped. With Options.MetricsProvider, the provider is told
// to delete the handler's series (MetricsProvider.DeleteHandlerMetrics). Removing a
// handler twice, or one of another informer, is a no-op. It may be called from inside
// the handler itself.
//
// It is asynchronous: it does not wait for the handler. A call the handler is making
// when RemoveEventHandler returns — or one its goroutine has already taken from the
// buffer and is about to make — still runs to its end afterwards; no other is made.
// So whatever that call uses (a channel it sends on, a client it writes with) must
// stay usable after the removal; ShutDownEventHandler removes and then waits until
// the handler has stopped.
//
// client-go: tools/cache/shared_informer.go sharedIndexInformer.RemoveEventHandler
func (s *SharedIndexInformer[T]) RemoveEventHandler(reg *Registration[T]) {
	if reg == nil || reg.informer != s {
		return
	}
	s.blockDeltas.Lock()
	removed := s.processor.removeListener(reg.l)
	s.blockDeltas.Unlock()
	if removed {
		reg.l.metrics.deleted()
	}
}
