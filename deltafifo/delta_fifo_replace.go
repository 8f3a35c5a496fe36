package deltafifo

import (
	"fmt"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/trace"
)

// Replace delivers a full list: a Replaced delta for every listed object, then a
// Deleted tombstone for every key that is queued or known but not in the list.
//
// Why tombstones: a relist happens after the watch broke. Whatever was deleted
// while it was down produced no DELETED event, so absence from the list is the only
// evidence. The tombstone (indexer.DeletedFinalStateUnknown) says "deleted, final
// state unknown" and carries the last state this client saw:
//   - for a queued key, the newest queued object — it is newer than anything the
//     consumer has, and the consumer has not even seen it yet;
//   - for a key only the consumer knows, the consumer's copy from KnownObjects.
//
// A known key that also has queued deltas gets one tombstone, from the queued case.
//
// kubernetes/kubernetes#83810 (fixed by #83911): Replace used to look only at one of
// the two sources, so an object added to the queue and deleted while the watch was
// down, or an object the consumer had, could vanish without a Deleted notification.
// Both sources are checked here; TestDeltaFIFOReplace83810 pins it.
//
// The first Replace (if no watch event came before it) sets the initial-list count
// to the number of keys it queued, listed and tombstoned; see HasSynced.
//
// Differences from client-go: the keys of all items are computed before anything is
// queued, so an item without a key fails the call with the queue unchanged (client-go
// has queued the items before it). Tombstones for queued keys are queued in queue
// order, not map order, so the result is deterministic.
//
// Simplified: when KnownObjects lists a key but GetByKey then errors or does not find
// it (the store changed under us), client-go queues a tombstone whose Obj is nil; we
// log and skip the key, so that a delta's Object is never the zero T. It is safe:
// such a key was removed from the store by someone else, so the consumer no longer
// has it, and the next relist will see the store again.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFO.Replace
func (f *DeltaFIFO[T]) Replace(items []T, resourceVersion string) error {
	keys := make([]string, len(items))
	listed := make(map[string]struct{}, len(items))
	for i, obj := range items {
		key, err := f.keyOf(obj)
		if err != nil {
			return fmt.Errorf("replace at resource version %q, item %d: %w", resourceVersion, i, err)
		}
		keys[i] = key
		listed[key] = struct{}{}
	}

	f.mu.Lock()
	defer f.mu.Unlock()

	for i, obj := range items {
		obj, err := f.transformLocked(keys[i], obj)
		if err != nil {
			return err
		}
		f.queueLocked(keys[i], Delta[T]{Type: Replaced, Object: obj})
	}

	tombstones := 0
	// Queued keys missing from the list. Queueing a tombstone for a key that is
	// already queued does not append to f.queue, so ranging over it is safe.
	for _, key := range f.queue {
		if _, ok := listed[key]; ok {
			continue
		}
		f.queueTombstoneLocked(key, f.items[key].Newest().Object)
		tombstones++
	}
	// Known keys missing from the list, unless the loop above covered them.
	if f.known != nil {
		for _, key := range f.known.ListKeys() {
			if _, ok := listed[key]; ok {
				continue
			}
			if _, queued := f.items[key]; queued {
				continue
			}
			obj, exists, err := f.known.GetByKey(key)
			if err != nil || !exists {
				f.logger.Warn("known object vanished during Replace; not queueing a tombstone",
					"key", key, "exists", exists, "error", err)
				continue
			}
			f.queueTombstoneLocked(key, obj)
			tombstones++
		}
	}

	f.sync.firstReplaceLocked(len(listed) + tombstones)
	if f.tracer != nil {
		f.tracer.Emit(trace.Event{Stage: trace.DeltaFIFO, Kind: trace.Replaced, Source: f.name,
			ResourceVersion: resourceVersion, Items: len(items), Tombstones: tombstones, QueueLen: len(f.queue)})
	}
	return nil
}

// queueTombstoneLocked queues an inferred delete of key whose last known state is
// obj. Tombstones are not transformed: obj came from the queue or the consumer, so
// it was transformed when it was first queued.
func (f *DeltaFIFO[T]) queueTombstoneLocked(key string, obj T) {
	f.queueLocked(key, Delta[T]{
		Type:      Deleted,
		Object:    obj,
		Tombstone: &indexer.DeletedFinalStateUnknown[T]{Key: key, Obj: obj},
	})
}

// Resync queues a Sync delta for every key in KnownObjects that has nothing queued.
// Without KnownObjects it does nothing.
//
// Why skip queued keys: KnownObjects lags the queue. A key with pending deltas will
// be re-delivered anyway, and a Sync carrying the consumer's (older) copy after
// them would roll the object back to a stale state.
//
// Sync deltas are not transformed: the object came from the consumer, so it was
// transformed when it was first queued.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFO.Resync
// client-go: tools/cache/delta_fifo.go DeltaFIFO.syncKeyLocked
func (f *DeltaFIFO[T]) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.known == nil {
		return nil
	}
	for _, key := range f.known.ListKeys() {
		if _, queued := f.items[key]; queued {
			continue
		}
		obj, exists, err := f.known.GetByKey(key)
		if err != nil || !exists {
			f.logger.Warn("known object vanished during Resync; not syncing it",
				"key", key, "exists", exists, "error", err)
			continue
		}
		f.queueLocked(key, Delta[T]{Type: Sync, Object: obj})
	}
	return nil
}
