package reflector

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubeinternals/informers/internal/objects"
	"github.com/kubeinternals/informers/internal/pause"
	"github.com/kubeinternals/informers/trace"
)

// Watch timeouts: each watch asks the server to end it after a random time in
// [min, 2*min), so that the watches of many clients do not all restart at once.
//
// client-go: tools/cache/reflector.go defaultMinWatchTimeout
const DefaultMinWatchTimeout = 5 * time.Minute

// InitialList selects how the reflector fetches the full state at the start of every
// list/watch cycle.
type InitialList int

const (
	// WatchList (the zero value) streams the state as one watch with
	// sendInitialEvents=true and keeps that watch open afterwards; when the server
	// refuses it, or the ListerWatcher declares it cannot serve it
	// (IsWatchListSemanticsUnSupported), the cycle falls back to a paged LIST.
	// client-go 1.35+ does this by default (the WatchListClient feature gate).
	//
	// client-go: tools/cache/reflector.go Reflector.ListAndWatchWithContext (useWatchList)
	WatchList InitialList = iota
	// PagedList is the classic path: a LIST, in pages, then a WATCH from the list's
	// resource version.
	PagedList
)

// String names the mode as the docs and the trace do.
func (m InitialList) String() string {
	switch m {
	case WatchList:
		return "watch-list"
	case PagedList:
		return "paged LIST"
	default:
		return fmt.Sprintf("InitialList(%d)", int(m))
	}
}

// Options configures NewReflector. The zero value is client-go 1.37's configuration:
// a watch-list with the LIST fallback, no resync, logs to slog.Default().
type Options[T Object] struct {
	// Name identifies the reflector in logs. "" means the Go type of T.
	Name string
	// MetricsName names the reflector's metrics; "" means its Name.
	MetricsName string
	// ResyncPeriod is how often store.Resync is called; 0 disables resync.
	ResyncPeriod time.Duration
	// ShouldResync, if set, is asked at every resync tick; Resync is skipped when it
	// returns false. An informer uses it to resync only when a handler is due.
	ShouldResync func() bool
	// Logger receives the reflector's logs (list and watch errors, relists). Nil
	// means slog.Default(); to discard them, pass slog.New(slog.DiscardHandler).
	Logger *slog.Logger
	// InitialList chooses how each cycle fetches the full state: WatchList (the
	// zero value, client-go 1.35+'s default) or PagedList (the classic LIST).
	InitialList InitialList
	// PageSize forces this page size on every LIST. 0 keeps client-go's rule: pages
	// of DefaultPageSize for a list at RV "" or "0", and one unpaged request at a
	// specific RV so that the watch cache can serve it.
	PageSize int64
	// WatchErrorHandler is called with the error that ended each list/watch cycle,
	// before the backoff. nil means DefaultWatchErrorHandler. It must return quickly.
	WatchErrorHandler func(ctx context.Context, r *Reflector[T], err error)
	// Backoff shapes the delay between failed cycles; zero fields take defaults.
	Backoff BackoffOptions
	// MinWatchTimeout raises the lower bound of the random watch timeout. Values at
	// or below DefaultMinWatchTimeout are ignored, to protect the control plane.
	MinWatchTimeout time.Duration
	// Tracer receives an event for every LIST and WATCH, watch event, bookmark,
	// watch end, relist, backoff and resync tick. Nil: off. See package trace.
	Tracer *trace.Tracer
	// CheckWatchList turns on the watch-list consistency check: at each watch-list's
	// end bookmark, before the store is replaced, the reflector LISTs once more at the
	// bookmark's resourceVersion (resourceVersionMatch=Exact; the apiserver may
	// answer it from its watch cache's snapshot, see checkWatchList), and compares
	// the two by UID and resourceVersion. A difference is an *InconsistencyError,
	// logged at Error level and passed to OnInconsistency, and the store gets the
	// LIST's objects. It costs one full, unpaged LIST per watch-list: for tests and
	// CI, as client-go's KUBE_WATCHLIST_INCONSISTENCY_DETECTOR is. It does nothing on
	// the LIST path.
	CheckWatchList bool
	// OnInconsistency, if set, is called with each difference CheckWatchList finds (a
	// test can fail on it), after it is logged. It must return quickly.
	OnInconsistency func(err *InconsistencyError)
	// MetricsProvider creates this reflector's metrics (see MetricsProvider). Nil:
	// no metrics, at the cost of a nil check per list, watch and event.
	MetricsProvider MetricsProvider
}

// Reflector keeps a Store in step with one resource on the API server: it lists
// everything once, then applies watch events, and relists when the watch cannot go
// on. See doc.go for the state machine.
//
// client-go: tools/cache/reflector.go Reflector
type Reflector[T Object] struct {
	// Set by NewReflector and never changed: read without a lock.
	name            string
	typeDescription string
	lw              ListerWatcher[T]
	store           Store[T]
	logger          *slog.Logger
	opts            Options[T]
	errorHandler    func(ctx context.Context, r *Reflector[T], err error)
	minWatchTimeout time.Duration
	// useWatchList: InitialList is WatchList and lw does not declare it unsupported.
	useWatchList bool
	// metrics is nil without Options.MetricsProvider; its methods then do nothing.
	metrics *reflectorMetrics
	// activity is when the watch last showed life (WatchActivity); it locks itself.
	activity watchActivity

	running atomic.Bool // true while Run executes; a second concurrent Run refuses

	// Owned by the goroutine running Run; no lock needed.
	backoff         *backoff
	paginatedResult bool // the RV="0" list came back in pages: the watch cache is off, keep paging
	// answered: the server has answered a fetch of the whole state (relists.go).
	answered bool
	// refetchReason is why the state is being fetched again, the first cause noted
	// since the last counted fetch (relists.go); nil when none is pending.
	refetchReason error

	mu sync.RWMutex
	// lastSyncRV is the resource version of the last list or watch event applied to
	// the store. Guarded by mu.
	lastSyncRV string
	// rvUnavailable is set when a list or watch at lastSyncRV failed with Expired or
	// "too large resource version", or when the watch cache's answer cannot get
	// through (S7), so the next list must be a consistent read (RV ""). Guarded by mu.
	rvUnavailable bool
}

// NewReflector returns a reflector that fills store from lw. It starts nothing: call
// Run.
//
// client-go: tools/cache/reflector.go NewReflectorWithOptions
func NewReflector[T Object](lw ListerWatcher[T], store Store[T], opts Options[T]) (*Reflector[T], error) {
	if lw == nil || objects.IsNil(lw) {
		return nil, fmt.Errorf("%w: nil ListerWatcher", ErrInvalidOptions)
	}
	if store == nil || objects.IsNil(store) {
		return nil, fmt.Errorf("%w: nil Store", ErrInvalidOptions)
	}
	if opts.InitialList != WatchList && opts.InitialList != PagedList {
		return nil, fmt.Errorf("%w: unknown InitialList %v", ErrInvalidOptions, opts.InitialList)
	}
	if opts.ResyncPeriod < 0 || opts.PageSize < 0 || opts.MinWatchTimeout < 0 {
		return nil, fmt.Errorf("%w: ResyncPeriod, PageSize and MinWatchTimeout must be >= 0", ErrInvalidOptions)
	}
	if _, err := newBackoff(opts.Backoff, time.Time{}); err != nil {
		return nil, err
	}
	r := &Reflector[T]{
		typeDescription: reflect.TypeFor[T]().String(),
		lw:              lw,
		store:           store,
		opts:            opts,
		errorHandler:    opts.WatchErrorHandler,
		minWatchTimeout: max(opts.MinWatchTimeout, DefaultMinWatchTimeout),
	}
	r.name = opts.Name
	if r.name == "" {
		r.name = r.typeDescription
	}
	r.metrics = newReflectorMetrics(opts.MetricsProvider, cmp.Or(opts.MetricsName, r.name))
	if r.errorHandler == nil {
		r.errorHandler = DefaultWatchErrorHandler[T]
	}
	r.logger = cmp.Or(opts.Logger, slog.Default()).With("reflector", r.name)
	r.useWatchList = opts.InitialList == WatchList
	if u, ok := lw.(WatchListUnsupporter); ok && r.useWatchList && u.IsWatchListSemanticsUnSupported() {
		r.logger.Debug("the ListerWatcher cannot serve a watch-list; every cycle will LIST")
		r.useWatchList = false
	}
	return r, nil
}

// Name returns the reflector's name, as used in its logs.
func (r *Reflector[T]) Name() string { return r.name }

// Run lists and watches until ctx is cancelled, backing off between failed cycles.
// When it returns, every goroutine it started has exited. Run must not be called
// again while it runs; a concurrent second call logs an error and returns.
//
// client-go: tools/cache/reflector.go Reflector.RunWithContext
func (r *Reflector[T]) Run(ctx context.Context) {
	if !r.running.CompareAndSwap(false, true) {
		r.logger.Error("Run called while the reflector is already running; ignoring")
		return
	}
	defer r.running.Store(false)
	defer r.runEnded()
	// Why now: the backoff's sequence begins when Run does, as client-go's begins when
	// its informer makes the reflector, which it does when it starts running.
	r.backoff, _ = newBackoff(r.opts.Backoff, time.Now()) // validated by NewReflector
	r.logger.Debug("starting reflector", "type", r.typeDescription, "resyncPeriod", r.opts.ResyncPeriod)
	defer r.logger.Debug("stopping reflector", "type", r.typeDescription)
	for {
		err := r.listAndWatch(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			r.errorHandler(ctx, r, err)
		}
		// Transition B1. Why back off even after a cycle that ended without error: every cycle
		// ends in a relist, and relists are what overload a recovering server.
		delay := r.backoff.Next(time.Now())
		r.refetchBecause(err)
		if r.opts.Tracer != nil {
			r.emit(trace.Event{Kind: trace.Relist, Reason: traceWhy(err)})
			r.emit(trace.Event{Kind: trace.Backoff, Duration: delay, Reason: "before the relist"})
		}
		if !pause.For(ctx, delay) {
			return
		}
	}
}

// LastSyncResourceVersion is the resource version of the last list or watch event
// the reflector applied to its store ("" before the first list). It is safe to call
// from any goroutine.
//
// client-go: tools/cache/reflector.go Reflector.LastSyncResourceVersion
func (r *Reflector[T]) LastSyncResourceVersion() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.lastSyncRV
}

func (r *Reflector[T]) setLastSyncResourceVersion(rv string) {
	r.mu.Lock()
	r.lastSyncRV = rv
	r.mu.Unlock()
	r.metrics.synced(rv)
}

func (r *Reflector[T]) setResourceVersionUnavailable(unavailable bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rvUnavailable = unavailable
}

// DefaultWatchErrorHandler logs err at a level that matches how unusual it is: a 410
// Gone (expired resource version) is logged at Info — each one costs a relist, and a
// storm of them must show in a default log without metrics — a clean close is
// silent, anything else is a warning.
//
// Differences from client-go: client-go logs the 410 at verbosity 4, which a default
// klog setup hides.
//
// client-go: tools/cache/reflector.go DefaultWatchErrorHandler
func DefaultWatchErrorHandler[T Object](_ context.Context, r *Reflector[T], err error) {
	switch {
	case isExpiredError(err):
		r.logger.Info("watch ended with 410 Gone (resource version expired); relisting", "err", err)
	case errors.Is(err, io.EOF):
		// closed normally
	case errors.Is(err, io.ErrUnexpectedEOF):
		r.logger.Info("watch closed with an unexpected EOF", "err", err)
	default:
		r.logger.Warn("list/watch failed", "type", r.typeDescription, "err", err)
	}
}

// watchTimeoutSeconds picks the server-side timeout of one watch, uniformly in
// [min, 2*min).
//
// client-go: tools/cache/reflector.go Reflector.watch
func (r *Reflector[T]) watchTimeoutSeconds() *int64 {
	lo := r.minWatchTimeout.Seconds()
	s := int64(lo + rand.Float64()*lo)
	return &s
}
