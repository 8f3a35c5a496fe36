package informer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/shard"
	"github.com/kubeinternals/informers/trace"
)

// ErrStarted is returned by the setters that only work before Run.
var ErrStarted = errors.New("informer has already started")

// ErrWrongType is wrapped by For's error when the Go type cannot hold the resource's
// objects (For[*corev1.Secret] on configmaps).
var ErrWrongType = errors.New("object type does not match the resource")

// ErrNotStarted is wrapped by Factory.WaitForCacheSync's error when an informer of the
// factory was never started (requested after Start).
var ErrNotStarted = errors.New("informer not started")

// QueueKind selects the queue between the reflector and the processing loop.
type QueueKind int

const (
	// RealFIFOQueue (the zero value) keeps every event in order and delivers a relist
	// as one atomic ReplacedAll and a resync as one SyncAll, popped in batches and
	// processed without holding the queue's lock, with bookmarks queued in order:
	// what every client-go 1.37 informer uses (the InOrderInformers, AtomicFIFO,
	// UnlockWhileProcessingFIFO and InOrderInformersBatchProcess feature gates).
	//
	// client-go: tools/cache/controller.go newQueueFIFO
	RealFIFOQueue QueueKind = iota
	// DeltaFIFOQueue groups the changes of one object into one queue entry
	// (handlers still get every change) and diffs a relist against the cache key by
	// key: the classic path most of the client-go literature describes, and what
	// client-go's informers used until the InOrderInformers gate turned on (beta and
	// on by default in 1.33, GA and locked on in 1.36). Choose it by name.
	DeltaFIFOQueue
)

// String names the queue as the docs and the trace do.
func (k QueueKind) String() string {
	switch k {
	case RealFIFOQueue:
		return "RealFIFO"
	case DeltaFIFOQueue:
		return "DeltaFIFO"
	default:
		return fmt.Sprintf("QueueKind(%d)", int(k))
	}
}

// Options configures NewSharedIndexInformer. The zero value is client-go 1.37's
// informer: a RealFIFO fed by a watch-list (LIST when the server refuses one), no
// resync, no extra indexes, logs to slog.Default(). Queue: DeltaFIFOQueue and
// InitialList: reflector.PagedList choose the classic pipeline.
type Options[T indexer.Object] struct {
	// Name identifies the informer in logs; "" uses the reflector's default.
	Name string
	// MetricsName names the metrics of this informer, its reflector and its handlers;
	// "" means Name (or the Go type when unnamed). A Factory sets it to the resource,
	// with its group when that is not the core group: configmaps, deployments.apps.
	MetricsName string
	// ResyncPeriod is the default resync period of handlers added without one; it is
	// also how often the informer checks whether any handler is due. 0: no resync.
	ResyncPeriod time.Duration
	// Indexers are the cache's extra indexes (the namespace index is common).
	Indexers indexer.Indexers[T]
	// Queue selects RealFIFOQueue (the zero value, client-go 1.37's) or
	// DeltaFIFOQueue (the classic queue).
	Queue QueueKind
	// InitialList selects how the reflector fetches the state at each (re)list:
	// reflector.WatchList (the zero value, client-go 1.35+'s: a stream, with the
	// LIST fallback) or reflector.PagedList (the classic LIST).
	InitialList reflector.InitialList
	// PageSize forces a LIST page size (0: the reflector's default rule).
	PageSize int64
	// BacklogWarning is the backlog at which a handler's listener first logs that it
	// falls behind (then at 2×, 4×, …; once the backlog has drained, the next burst
	// warns again from BacklogWarning). 0 means 1024; negative disables the log.
	BacklogWarning int
	// Logger receives the informer's, the reflector's and the listeners' logs:
	// recovered handler panics, handlers falling behind, objects the cache rejected,
	// list and watch errors. Nil means slog.Default() (as it is when the informer is
	// built); to discard them, pass slog.New(slog.DiscardHandler).
	Logger *slog.Logger
	// Tracer receives the events of every stage of this informer: it is passed to its
	// reflector and queue, and the informer reports each write to the indexer, each
	// fan-out and each handler call. Nil: off. See package trace.
	Tracer *trace.Tracer
	// CheckWatchList turns on the reflector's watch-list consistency check: each
	// watch-list is compared with a LIST at the same resourceVersion, and a
	// difference is logged at Error level, passed to OnInconsistency, and repaired
	// (the cache gets the LIST's objects). One extra LIST per watch-list: for tests
	// and CI. See reflector.Options.CheckWatchList.
	CheckWatchList bool
	// OnInconsistency, if set, is called with each difference CheckWatchList finds.
	OnInconsistency func(err *reflector.InconsistencyError)
	// MutationDetector, if set, turns on the cache mutation detector: a deep copy of
	// every cached object, compared with it periodically, so that a handler or a
	// Lister caller that changes a shared object is reported (see MutationDetector).
	// Nil: off. For tests and CI.
	MutationDetector *MutationDetector
	// MetricsProvider creates the metrics of this informer, its reflector and its
	// handlers (see MetricsProvider). Nil: no metrics, at the cost of a nil check
	// per queued item, watch event and notification.
	//
	// Pitfall: informers that share a provider need distinct names (MetricsName, else
	// Name, or the Go type when unnamed): two with one name write the same series. A Factory
	// publishes one informer per name and logs the others; informers built here
	// directly are not checked, because there is no process-wide registry to check
	// them against (client-go's NewInformerName keeps one and refuses a duplicate).
	MetricsProvider MetricsProvider
	// Shard, if not the zero Shard, makes the informer list and watch that shard of
	// the resource only: the ListerWatcher is wrapped in listwatch.WithShard, which
	// sends the shard selector on every request and drops any object outside the
	// shard before it reaches the cache — also when the apiserver ignores the
	// selector (its feature gate ShardedListAndWatch off), in which case Sharding
	// says "client-side filtering" and it is logged once at Warn level. See package
	// shard.
	Shard shard.Shard
	// RequireServerSharding makes a sharded informer fail its sync, with an error
	// wrapping listwatch.ErrServerNotSharding, when the apiserver does not apply the
	// shard selector, instead of filtering on the client. WaitForCacheSync returns
	// that error at once.
	RequireServerSharding bool
}

// SharedIndexInformer lists and watches one resource, keeps it in an Indexer, and
// fans every change out to any number of handlers, each on its own goroutine.
//
// client-go: tools/cache/shared_informer.go sharedIndexInformer
type SharedIndexInformer[T indexer.Object] struct {
	lw        reflector.ListerWatcher[T]
	opts      Options[T]
	logger    *slog.Logger
	indexer   indexer.Indexer[T]
	processor *sharedProcessor[T]
	// synced is closed when the queue has handed over the first list (informer
	// HasSynced).
	synced chan struct{}
	errs   syncErrors
	// description names the informer in WaitForCacheSync's errors and reports:
	// the Factory's Resource.String(), else Options.Name. Set before the informer is
	// shared, never changed.
	description string
	// mutations is the cache mutation detector; nil when Options.MutationDetector is.
	// Set by NewSharedIndexInformer, never changed.
	mutations *mutationDetector[T]
	// metrics is nil when Options.MetricsProvider is. Set by NewSharedIndexInformer,
	// never changed.
	metrics *informerMetrics
	// sharded is the informer's ListerWatcher when Options.Shard is set, nil
	// otherwise. Set by NewSharedIndexInformer, never changed.
	sharded *listwatch.Sharded[T]

	// blockDeltas is held while a batch of deltas is applied to the indexer and
	// distributed, and while a late handler's replay is queued, so that the replay
	// and the live notifications cannot interleave or miss each other.
	//
	// client-go: tools/cache/shared_informer.go sharedIndexInformer.blockDeltas
	blockDeltas sync.Mutex
	// tracedIndexes caches the indexes for the trace's Applied events
	// (tracedIndexList). Guarded by blockDeltas.
	tracedIndexes []namedIndex[T]

	mu sync.Mutex
	// started, stopped: Run's lifecycle. Guarded by mu.
	started, stopped bool
	// transform and watchErrorHandler are set before Run. Guarded by mu.
	transform         func(T) (T, error)
	watchErrorHandler func(ctx context.Context, err error)
	// resyncCheckPeriod is how often the reflector asks whether a handler is due;
	// it starts at Options.ResyncPeriod and is lowered by a handler registered
	// before Run with a shorter period. Guarded by mu.
	resyncCheckPeriod time.Duration
	// handlers counts the registrations so far, to name unnamed handlers. Guarded by mu.
	handlers int
	// refl is the running reflector, for LastSyncResourceVersion. Guarded by mu.
	refl *reflector.Reflector[T]
}

// NewSharedIndexInformer returns an informer for lw. It starts nothing: add handlers,
// then call Run.
//
// client-go: tools/cache/shared_informer.go NewSharedIndexInformerWithOptions
func NewSharedIndexInformer[T indexer.Object](lw reflector.ListerWatcher[T], opts Options[T]) *SharedIndexInformer[T] {
	if opts.BacklogWarning == 0 {
		opts.BacklogWarning = defaultBacklogWarning
	}
	// Why slog.Default and not silence: a recovered handler panic or a handler
	// falling behind must be seen by someone (client-go logs them through klog).
	base := cmp.Or(opts.Logger, slog.Default())
	logger := base
	if opts.Name != "" {
		logger = logger.With("informer", opts.Name)
	}
	name := cmp.Or(opts.Name, fmt.Sprintf("%T", *new(T)))
	metrics := newInformerMetrics(opts.MetricsProvider, cmp.Or(opts.MetricsName, name))
	var sharded *listwatch.Sharded[T]
	if !opts.Shard.IsZero() && lw != nil {
		so := listwatch.ShardOptions{Shard: opts.Shard, RequireServerSharding: opts.RequireServerSharding, Logger: logger,
			Tracer: opts.Tracer, Source: traceSource(opts.Name)}
		if p := opts.MetricsProvider; p != nil {
			so.Dropped = orNoop(p.NewShardDroppedMetric(metrics.name()))
			so.ClientFiltering = orNoop(p.NewShardClientFilteringMetric(metrics.name()))
		}
		// WithShard refuses only a nil ListerWatcher and the zero Shard, both
		// excluded here.
		sharded, _ = listwatch.WithShard(lw, so)
		lw = sharded
	}
	var mutations *mutationDetector[T]
	if opts.MutationDetector != nil {
		// The detector's lines name the informer once, by its Go type when unnamed.
		mutations = newMutationDetector[T](name, *opts.MutationDetector, base.With("informer", name))
	}
	return &SharedIndexInformer[T]{
		mutations:         mutations,
		metrics:           metrics,
		lw:                lw,
		sharded:           sharded,
		opts:              opts,
		logger:            logger,
		indexer:           indexer.New(indexer.Options[T]{Indexers: opts.Indexers}),
		processor:         newSharedProcessor[T](opts.Tracer, traceSource(opts.Name)),
		synced:            make(chan struct{}),
		errs:              newSyncErrors(),
		resyncCheckPeriod: opts.ResyncPeriod,
	}
}

// Indexer returns the informer's cache. It is live: read it, never write it.
func (s *SharedIndexInformer[T]) Indexer() indexer.Indexer[T] { return s.indexer }

// Lister returns a Lister over the cache.
func (s *SharedIndexInformer[T]) Lister() indexer.Lister[T] { return indexer.NewLister(s.indexer) }

// HasSynced reports whether the informer has filled its cache from the first list.
// Pitfall: that does not mean a handler has seen those objects yet — use the
// Registration's HasSynced for that.
func (s *SharedIndexInformer[T]) HasSynced() bool {
	select {
	case <-s.synced:
		return true
	default:
		return false
	}
}

// Synced is closed when HasSynced becomes true.
func (s *SharedIndexInformer[T]) Synced() <-chan struct{} { return s.synced }

// LastSyncResourceVersion is the resource version the cache last synced to ("" before Run).
func (s *SharedIndexInformer[T]) LastSyncResourceVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refl == nil {
		return ""
	}
	return s.refl.LastSyncResourceVersion()
}

// SetTransform sets a function applied to every object before it is cached (to
// strip managedFields, say). It must be called before Run.
//
// client-go: tools/cache/shared_informer.go sharedIndexInformer.SetTransform
func (s *SharedIndexInformer[T]) SetTransform(f func(T) (T, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return fmt.Errorf("SetTransform: %w", ErrStarted)
	}
	s.transform = f
	return nil
}

// SetWatchErrorHandler sets the function called with each error that ends a
// list/watch cycle (the default logs it). It must be called before Run.
//
// client-go: tools/cache/shared_informer.go sharedIndexInformer.SetWatchErrorHandlerWithContext
func (s *SharedIndexInformer[T]) SetWatchErrorHandler(f func(ctx context.Context, err error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return fmt.Errorf("SetWatchErrorHandler: %w", ErrStarted)
	}
	s.watchErrorHandler = f
	return nil
}

// HasStarted reports whether Run has been called.
func (s *SharedIndexInformer[T]) HasStarted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// IsStopped reports whether Run has returned.
func (s *SharedIndexInformer[T]) IsStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}
