package deltafifo

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/trace"
)

// defaultBatchSize is the most deltas one PopBatch hands over.
//
// client-go: tools/cache/the_real_fifo.go defaultBatchSize
const defaultBatchSize = 1000

// RealFIFOOptions configures a RealFIFO. The zero value is a working queue keyed by
// namespace/name that drops bookmarks.
//
// client-go: tools/cache/the_real_fifo.go RealFIFOOptions
type RealFIFOOptions[T indexer.Object] struct {
	// KeyFunc computes an object's key (used to validate objects and to keep a
	// batch's keys distinct). Nil means indexer.MetaNamespaceKeyFunc.
	KeyFunc indexer.KeyFunc[T]
	// Transform, if set, runs once on every object as it is queued, including each
	// object of a Replace. It must be fast; see the package doc.
	Transform func(T) (T, error)
	// EmitBookmark makes Bookmark queue a Bookmark delta. False drops bookmarks.
	// client-go's informers turn it on, so the store learns the bookmark's resource
	// version in order with the events around it.
	EmitBookmark bool
	// Logger receives warnings about slow handlers. Nil means slog.Default(); to
	// discard them, pass slog.New(slog.DiscardHandler).
	Logger *slog.Logger
	// Name identifies this queue in logs and errors. Empty means "RealFIFO".
	Name string
	// Tracer receives an event for every delta queued, Replace and Pop. Nil: off,
	// at the cost of one pointer check.
	Tracer *trace.Tracer
	// QueuedItems, if set, is set to the number of queued deltas (Len) after every
	// change, under the queue's lock: an informer's queued-items metric.
	QueuedItems GaugeMetric
}

// RealFIFO is the queue client-go 1.37 informers use by default: every event, in the
// order it arrived, with no per-key coalescing. A relist is one ReplacedAll delta
// and a resync one SyncAll delta; the consumer diffs them against its store.
//
// This is client-go's "atomic" RealFIFO (AtomicEvents with UnlockWhileProcessing,
// both on by default in 1.36). Because it never reads the consumer's store, it can
// release its lock while process runs. See the package doc for why client-go moved
// from DeltaFIFO to this queue.
//
// Invariant: at most one process call runs at a time, and deltas are processed in
// queue order.
//
// client-go: tools/cache/the_real_fifo.go RealFIFO
type RealFIFO[T indexer.Object] struct {
	// Set by NewRealFIFO and never changed: safe to read without mu.
	name         string
	logger       *slog.Logger
	keyFunc      indexer.KeyFunc[T]
	transform    func(T) (T, error)
	emitBookmark bool
	batchSize    int // defaultBatchSize; tests in this package lower it
	tracer       *trace.Tracer
	queued       GaugeMetric // nil if the options had none; set under mu

	// mu guards every field below. Pop releases it while process runs if fewer than
	// two batches are queued.
	mu sync.Mutex
	// cond (cond.L == &mu) is broadcast when a delta is queued, when a process call
	// that ran without mu ends, and on Close.
	cond sync.Cond
	// items is the queue, oldest first. Guarded by mu.
	items []entry[T]
	// sync tracks the first list (HasSynced). Guarded by mu.
	sync initialSync
	// closed is set by Close. Guarded by mu.
	closed bool
	// processing is true while a Pop runs process without holding mu. Guarded by mu.
	// Other Pops wait for it, which keeps processing serial and in order even with
	// several consumer goroutines.
	processing bool
	// seen is PopBatch's scratch set of the keys in the batch being built. Guarded
	// by mu; empty between calls. Kept to save an allocation per batch.
	seen map[string]struct{}
}

// entry is one queued delta with its object's key, computed once at enqueue.
type entry[T any] struct {
	key   string // "" for ReplacedAll, SyncAll and Bookmark
	delta Delta[T]
}

// NewRealFIFO returns an empty RealFIFO. It starts no goroutine.
//
// Simplified: client-go's non-atomic mode (KnownObjects, one Replaced delta per
// object and inferred tombstones, held lock) is the transitional mode behind the
// AtomicFIFO feature gate, which is on by default in 1.36. It is left out; DeltaFIFO
// here shows how tombstones are inferred inside a queue.
//
// client-go: tools/cache/the_real_fifo.go NewRealFIFOWithOptions
func NewRealFIFO[T indexer.Object](opts RealFIFOOptions[T]) *RealFIFO[T] {
	f := &RealFIFO[T]{
		name:         opts.Name,
		keyFunc:      opts.KeyFunc,
		transform:    opts.Transform,
		emitBookmark: opts.EmitBookmark,
		tracer:       opts.Tracer,
		queued:       opts.QueuedItems,
		batchSize:    defaultBatchSize,
		sync:         newInitialSync(),
		seen:         map[string]struct{}{},
	}
	if f.name == "" {
		f.name = "RealFIFO"
	}
	if f.keyFunc == nil {
		f.keyFunc = indexer.MetaNamespaceKeyFunc[T]
	}
	f.logger = newLogger(opts.Logger, f.name)
	f.cond.L = &f.mu
	return f
}

// Add queues an Added delta.
//
// client-go: tools/cache/the_real_fifo.go RealFIFO.Add
func (f *RealFIFO[T]) Add(obj T) error { return f.event(Added, obj) }

// Update queues an Updated delta.
//
// client-go: tools/cache/the_real_fifo.go RealFIFO.Update
func (f *RealFIFO[T]) Update(obj T) error { return f.event(Updated, obj) }

// Delete queues a Deleted delta. Unlike DeltaFIFO it never drops one: the queue does
// not know what the consumer has. Pitfall: so a handler behind a RealFIFO can get
// OnDelete for an object it never saw added (the informer, like client-go's
// processDeltas, passes every delete on); DeltaFIFO drops such deletes itself.
//
// client-go: tools/cache/the_real_fifo.go RealFIFO.Delete
func (f *RealFIFO[T]) Delete(obj T) error { return f.event(Deleted, obj) }

// event queues one watch event after computing its key and applying the transform.
// Any event marks the queue populated, as in DeltaFIFO.
//
// client-go: tools/cache/the_real_fifo.go RealFIFO.addToItems_locked
func (f *RealFIFO[T]) event(t DeltaType, obj T) error {
	key, err := keyOf(f.name, f.keyFunc, obj)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sync.markPopulatedLocked()
	obj, err = applyTransform(f.transform, obj)
	if err != nil {
		return fmt.Errorf("%s: %q: %w", f.name, key, err)
	}
	f.appendLocked(entry[T]{key: key, delta: Delta[T]{Type: t, Object: obj}})
	return nil
}

// Replace queues the whole list as one ReplacedAll delta whose Info holds the
// (transformed) objects and resourceVersion. The consumer, not the queue, works out
// which objects were deleted: it compares the list with its store.
//
// The first Replace, if no watch event came before it, sets the initial-list count
// to the number of deltas queued so far — normally 1, the ReplacedAll itself.
//
// Pitfall: without a Transform, the delta holds items itself (no copy); the caller
// must not modify the slice afterwards. With one, a new slice is built and items is
// left untouched.
//
// Differences from client-go: a nil item is rejected (error wrapping ErrKey) before
// anything is queued; client-go queues it and the consumer fails on it later.
//
// client-go: tools/cache/the_real_fifo.go RealFIFO.Replace
// client-go: tools/cache/the_real_fifo.go RealFIFO.addReplaceToItemsLocked
func (f *RealFIFO[T]) Replace(items []T, resourceVersion string) error {
	for i, obj := range items {
		if isNil(obj) {
			return fmt.Errorf("%s: replace at resource version %q, item %d: %w: %w",
				f.name, resourceVersion, i, ErrKey, indexer.ErrNilObject)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	objects := items
	if f.transform != nil {
		objects = make([]T, len(items))
		for i, obj := range items {
			out, err := applyTransform(f.transform, obj)
			if err != nil {
				return fmt.Errorf("%s: replace at resource version %q, item %d: %w", f.name, resourceVersion, i, err)
			}
			objects[i] = out
		}
	}
	f.appendLocked(entry[T]{delta: Delta[T]{
		Type: ReplacedAll,
		Info: &Info[T]{Objects: objects, ResourceVersion: resourceVersion},
	}})
	f.sync.firstReplaceLocked(len(f.items))
	if f.tracer != nil {
		f.tracer.Emit(trace.Event{Stage: trace.RealFIFO, Kind: trace.Replaced, Source: f.name,
			ResourceVersion: resourceVersion, Items: len(items), QueueLen: len(f.items)})
	}
	return nil
}

// Resync queues one SyncAll delta: "re-deliver everything in your store". Only the
// consumer has the store, so only it can do this.
//
// client-go: tools/cache/the_real_fifo.go RealFIFO.Resync
func (f *RealFIFO[T]) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.appendLocked(entry[T]{delta: Delta[T]{Type: SyncAll}})
	return nil
}

// Bookmark queues a Bookmark delta carrying resourceVersion if the EmitBookmark
// option is set, and does nothing otherwise.
//
// Why a delta and not a field: the consumer should record the bookmark's resource
// version only after it has applied the events that came before the bookmark, and
// the queue's order is exactly that.
//
// client-go: tools/cache/the_real_fifo.go RealFIFO.Bookmark
func (f *RealFIFO[T]) Bookmark(resourceVersion string) error {
	if !f.emitBookmark {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.appendLocked(entry[T]{delta: Delta[T]{
		Type: Bookmark,
		Info: &Info[T]{ResourceVersion: resourceVersion},
	}})
	return nil
}

// appendLocked queues e at the tail and wakes a waiting Pop.
func (f *RealFIFO[T]) appendLocked(e entry[T]) {
	f.items = append(f.items, e)
	setLengthLocked(f.queued, len(f.items))
	f.cond.Broadcast()
	if f.tracer != nil {
		f.traceQueuedLocked(e)
	}
}

// HasSynced reports whether the first list has been popped and processed — or
// whether an Add, Update or Delete came before any Replace. It takes no lock.
//
// client-go: tools/cache/the_real_fifo.go RealFIFO.HasSynced
func (f *RealFIFO[T]) HasSynced() bool { return f.sync.hasSynced() }

// Len is the number of queued deltas, one per event (a ReplacedAll counts once):
// what an informer's queued-items metric reports. It takes the lock, so a Pop's
// process must not call it.
//
// client-go: tools/cache/the_real_fifo.go RealFIFO (len(f.items), the numberOfQueuedItem metric)
func (f *RealFIFO[T]) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.items)
}

// Synced returns a channel that is closed when HasSynced becomes true.
//
// client-go: tools/cache/the_real_fifo.go RealFIFO.Done
func (f *RealFIFO[T]) Synced() <-chan struct{} { return f.sync.done }

// Close wakes every waiting Pop; from now on Pop returns ErrClosed once the queue is
// empty. Calling Close again does nothing.
//
// client-go: tools/cache/the_real_fifo.go RealFIFO.Close
func (f *RealFIFO[T]) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.cond.Broadcast()
}
