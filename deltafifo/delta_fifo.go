package deltafifo

import (
	"cmp"
	"fmt"
	"log/slog"
	"sync"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/trace"
)

// DeltaFIFOOptions configures a DeltaFIFO. The zero value is a working queue keyed
// by namespace/name, without known objects, transform or logging.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFOOptions
type DeltaFIFOOptions[T indexer.Object] struct {
	// KeyFunc computes an object's key. Nil means indexer.MetaNamespaceKeyFunc.
	KeyFunc indexer.KeyFunc[T]
	// KnownObjects is what the consumer already has (the informer's indexer). With
	// it, Replace also infers deletes of objects the consumer knows, Delete is kept
	// for known objects, and Resync has something to re-deliver. Nil means the queue
	// only knows what is queued: Resync is a no-op and deletes of already-popped
	// objects are dropped.
	KnownObjects KnownObjects[T]
	// Transform, if set, runs once on every object as it is queued — but not on
	// Sync deltas or tombstones, whose objects were transformed when they were first
	// queued. It runs under the queue's lock, so it must be fast, and it should be
	// idempotent (see the package doc). Typical use: drop managedFields to save memory.
	Transform func(T) (T, error)
	// Logger receives warnings (slow handlers, inconsistent known objects). Nil
	// means slog.Default(); to discard them, pass slog.New(slog.DiscardHandler).
	Logger *slog.Logger
	// Name identifies this queue in logs and errors. Empty means "DeltaFIFO".
	Name string
	// Tracer receives an event for every delta queued (or coalesced), Replace,
	// dropped Delete and Pop. Nil: off, at the cost of one pointer check.
	Tracer *trace.Tracer
	// QueuedItems, if set, is set to the number of queued keys (Len) after every
	// change, under the queue's lock: an informer's queued-items metric.
	QueuedItems GaugeMetric
}

// DeltaFIFO is the classic informer queue: for each key, the list of every change
// (Deltas) since the consumer last popped that key, with keys handed out in the
// order they were first queued.
//
// It answers four needs at once: every change is processed at most once; when a key
// is processed, the consumer sees everything that happened to it meanwhile; deletes
// are delivered, even those only a relist noticed; and objects can be periodically
// re-delivered (Resync).
//
// Pitfall: Pop calls process with the queue's lock held (so that KnownObjects,
// which process updates, never disagrees with the queue). process must not call
// back into the queue, and a slow process blocks the reflector.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFO
type DeltaFIFO[T indexer.Object] struct {
	// Set by NewDeltaFIFO and never changed: safe to read without mu.
	name      string
	logger    *slog.Logger
	keyFunc   indexer.KeyFunc[T]
	known     KnownObjects[T] // nil if the options had none
	transform func(T) (T, error)
	tracer    *trace.Tracer
	queued    GaugeMetric // nil if the options had none; set under mu

	// mu guards every field below. Pop holds it while process runs.
	mu sync.Mutex
	// cond (cond.L == &mu) is broadcast when a key is queued and on Close.
	cond sync.Cond
	// items maps a queued key to its pending deltas. Guarded by mu.
	// Invariant: a key is in items iff it is in queue, and its Deltas is non-empty.
	items map[string]Deltas[T]
	// queue holds the keys in the order Pop hands them out. Guarded by mu.
	// Invariant: no duplicates; a new key goes to the tail, a queued key keeps its place.
	queue []string
	// sync tracks the first list (HasSynced). Guarded by mu.
	sync initialSync
	// closed is set by Close. Guarded by mu. It only changes what Pop does on an
	// empty queue; writes keep working, as in client-go.
	closed bool
}

// NewDeltaFIFO returns an empty DeltaFIFO. It starts no goroutine.
//
// Simplified: client-go's EmitDeltaTypeReplaced option (false by default, for
// compatibility with consumers older than 2020) is always on here: Replace emits
// Replaced, never Sync, so a consumer can tell a relist from a periodic resync.
//
// client-go: tools/cache/delta_fifo.go NewDeltaFIFOWithOptions
func NewDeltaFIFO[T indexer.Object](opts DeltaFIFOOptions[T]) *DeltaFIFO[T] {
	f := &DeltaFIFO[T]{
		name:      opts.Name,
		keyFunc:   opts.KeyFunc,
		known:     opts.KnownObjects,
		transform: opts.Transform,
		tracer:    opts.Tracer,
		queued:    opts.QueuedItems,
		items:     map[string]Deltas[T]{},
		sync:      newInitialSync(),
	}
	if f.name == "" {
		f.name = "DeltaFIFO"
	}
	if f.keyFunc == nil {
		f.keyFunc = indexer.MetaNamespaceKeyFunc[T]
	}
	f.logger = newLogger(opts.Logger, f.name)
	f.cond.L = &f.mu
	return f
}

// newLogger returns logger (slog.Default() when nil) tagged with the queue's name.
func newLogger(logger *slog.Logger, name string) *slog.Logger {
	return cmp.Or(logger, slog.Default()).With("queue", name)
}

// Add queues an Added delta for obj.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFO.Add
func (f *DeltaFIFO[T]) Add(obj T) error { return f.event(Added, obj) }

// Update queues an Updated delta for obj.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFO.Update
func (f *DeltaFIFO[T]) Update(obj T) error { return f.event(Updated, obj) }

// Delete queues a Deleted delta for obj — unless the key is neither queued nor in
// KnownObjects, in which case the delete is dropped: the consumer never had the
// object, or a relist already told it the object was gone, and a second delete
// notification would be a duplicate.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFO.Delete
func (f *DeltaFIFO[T]) Delete(obj T) error { return f.event(Deleted, obj) }

// event queues one watch event. Any of them marks the queue populated: a queue
// whose first input is a watch event has no initial list to wait for.
//
// Why the key is computed before taking the lock: the key function is pure, and
// client-go's calls it under the lock for no benefit. One difference follows: an
// object without a key does not mark the queue populated (client-go's Add does).
func (f *DeltaFIFO[T]) event(t DeltaType, obj T) error {
	key, err := f.keyOf(obj)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sync.markPopulatedLocked()
	if t == Deleted && !f.deleteIsNewsLocked(key) {
		if f.tracer != nil {
			f.tracer.Emit(trace.Event{Stage: trace.DeltaFIFO, Kind: trace.DeleteDropped, Source: f.name,
				Key: key, ResourceVersion: rvOf(obj), QueueLen: len(f.queue)})
		}
		return nil
	}
	obj, err = f.transformLocked(key, obj)
	if err != nil {
		return err
	}
	f.queueLocked(key, Delta[T]{Type: t, Object: obj})
	return nil
}

// deleteIsNewsLocked reports whether a delete of key should be delivered: the key
// is queued, or KnownObjects has it. An error from KnownObjects counts as "has it":
// a duplicate delete is harmless, a lost one is not.
func (f *DeltaFIFO[T]) deleteIsNewsLocked(key string) bool {
	if _, queued := f.items[key]; queued {
		return true
	}
	if f.known == nil {
		return false
	}
	_, exists, err := f.known.GetByKey(key)
	return err != nil || exists
}

// KeyOf returns the key of the object a delta is about: the tombstone's key for an
// inferred delete, the key function's answer otherwise. Whole-list deltas
// (ReplacedAll, SyncAll, Bookmark) have no key and return an error wrapping ErrKey.
// For a popped Deltas, pass *deltas.Newest().
//
// client-go: tools/cache/delta_fifo.go DeltaFIFO.KeyOf
func (f *DeltaFIFO[T]) KeyOf(d Delta[T]) (string, error) {
	if d.Tombstone != nil {
		return d.Tombstone.Key, nil
	}
	switch d.Type {
	case ReplacedAll, SyncAll, Bookmark:
		return "", fmt.Errorf("%s: a %s delta is about no single object: %w", f.name, d.Type, ErrKey)
	}
	return f.keyOf(d.Object)
}

// keyOf runs the key function, turning a nil object and a key function error into
// an error wrapping ErrKey (never a panic).
func (f *DeltaFIFO[T]) keyOf(obj T) (string, error) {
	return keyOf(f.name, f.keyFunc, obj)
}

func keyOf[T any](queue string, keyFunc indexer.KeyFunc[T], obj T) (string, error) {
	if isNil(obj) {
		return "", fmt.Errorf("%s: %w: %w", queue, ErrKey, indexer.ErrNilObject)
	}
	key, err := keyFunc(obj)
	if err != nil {
		return "", fmt.Errorf("%s: %w of %T: %w", queue, ErrKey, obj, err)
	}
	return key, nil
}

// transformLocked applies the Transform option to an object that is being queued
// for the first time. Callers skip it for Sync deltas and tombstones.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFO.queueActionInternalLocked
func (f *DeltaFIFO[T]) transformLocked(key string, obj T) (T, error) {
	out, err := applyTransform(f.transform, obj)
	if err != nil {
		return out, fmt.Errorf("%s: %q: %w", f.name, key, err)
	}
	return out, nil
}

// applyTransform runs fn (if any) on obj. Its errors wrap ErrTransform; a nil
// result is an error too, because every delta's object must have a key.
func applyTransform[T any](fn func(T) (T, error), obj T) (T, error) {
	if fn == nil {
		return obj, nil
	}
	out, err := fn(obj)
	if err != nil {
		return out, fmt.Errorf("%w: %w", ErrTransform, err)
	}
	if isNil(out) {
		return out, fmt.Errorf("%w: it returned a nil object", ErrTransform)
	}
	return out, nil
}

// queueLocked appends d to key's deltas, putting key at the tail of the queue if it
// was not queued, and wakes a waiting Pop.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFO.queueActionInternalLocked
func (f *DeltaFIFO[T]) queueLocked(key string, d Delta[T]) {
	old, queued := f.items[key]
	if !queued {
		f.queue = append(f.queue, key)
		setLengthLocked(f.queued, len(f.queue))
	}
	deltas := dedupDeltas(append(old, d))
	f.items[key] = deltas
	f.cond.Broadcast()
	if f.tracer != nil {
		f.traceQueuedLocked(key, d, len(deltas), len(deltas) == len(old))
	}
}

// dedupDeltas merges the last two deltas if both are deletes — the only duplicate
// the queue removes. A relist and the watch can both report the same delete (one
// as a tombstone, one as an event); the consumer needs it once, and the kept one is
// the one that is not a tombstone, because it carries the object's real final state.
//
// Invariant: it never returns an empty slice for a non-empty input.
//
// Why only deletes: every other pair is two real states of the object, which a
// consumer may want to see (Updated then Updated is two changes, not one).
//
// client-go: tools/cache/delta_fifo.go dedupDeltas
// client-go: tools/cache/delta_fifo.go isDeletionDup
func dedupDeltas[T any](deltas Deltas[T]) Deltas[T] {
	n := len(deltas)
	if n < 2 {
		return deltas
	}
	newer, older := &deltas[n-1], &deltas[n-2]
	if newer.Type != Deleted || older.Type != Deleted {
		return deltas
	}
	if older.isTombstone() {
		*older = *newer
	}
	deltas[n-1] = Delta[T]{} // let the dropped delta's object be collected
	return deltas[:n-1]
}
