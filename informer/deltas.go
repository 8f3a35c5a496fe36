package informer

import (
	"errors"
	"fmt"
	"time"

	"github.com/kubeinternals/informers/deltafifo"
	"github.com/kubeinternals/informers/indexer"
)

// handleDeltas applies one popped item's deltas, oldest first, under blockDeltas.
// A delta the cache rejects (an IndexFunc error, say) is logged with its key and
// skipped; the others are still applied. So one object with data an IndexFunc did not
// expect costs that object only, with either queue: a DeltaFIFO item holds one key,
// but a RealFIFO batch or a ReplacedAll holds many.
//
// Differences from client-go: client-go's indexer panics on an IndexFunc error, which
// ends the process; there is nothing after it to compare with.
//
// client-go: tools/cache/shared_informer.go sharedIndexInformer.handleDeltas
func (s *SharedIndexInformer[T]) handleDeltas(deltas deltafifo.Deltas[T], isInInitialList bool) error {
	var began time.Time
	if s.metrics != nil {
		began = time.Now()
	}
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	for _, d := range deltas {
		if err := s.applyDelta(d, isInInitialList); err != nil {
			s.logRejected(d, err)
		} else if s.metrics != nil {
			s.metrics.applied(deltaRV(d))
		}
	}
	s.metrics.processed(began)
	return nil
}

// deltaRV is the resource version a delta brings the cache to: the list's for a
// ReplacedAll, the bookmark's for a Bookmark, the object's otherwise ("" for a
// SyncAll, which changes nothing).
func deltaRV[T indexer.Object](d deltafifo.Delta[T]) string {
	switch d.Type {
	case deltafifo.ReplacedAll, deltafifo.Bookmark:
		if d.Info != nil {
			return d.Info.ResourceVersion
		}
		return ""
	case deltafifo.SyncAll:
		return ""
	default:
		return d.Object.GetResourceVersion()
	}
}

// logRejected logs a delta the cache did not take.
func (s *SharedIndexInformer[T]) logRejected(d deltafifo.Delta[T], err error) {
	if d.Type == deltafifo.ReplacedAll || d.Type == deltafifo.SyncAll || d.Type == deltafifo.Bookmark {
		s.logger.Error("could not apply a list to the cache; it keeps its previous contents until the next relist",
			"delta", d.Type.String(), "err", err)
		return
	}
	key, _ := indexer.MetaNamespaceKeyFunc(d.Object)
	s.logger.Error("could not apply a change to the cache; it keeps the object's last good state (if any) until the object changes again",
		"key", key, "delta", d.Type.String(), "err", err)
}

// handleBatch applies a RealFIFO batch (distinct keys, in order) under one lock.
//
// Simplified: client-go applies a batch to the store in one Transaction; we apply it
// delta by delta under blockDeltas, which is the same for every reader of the
// informer's notifications and differs only in how long the indexer's own lock is held.
//
// client-go: tools/cache/shared_informer.go sharedIndexInformer.handleBatchDeltas
func (s *SharedIndexInformer[T]) handleBatch(batch []deltafifo.Delta[T], isInInitialList bool) error {
	return s.handleDeltas(batch, isInInitialList)
}

// applyDelta updates the cache with one delta, then tells the handlers.
//
// client-go: tools/cache/controller.go processDeltas
func (s *SharedIndexInformer[T]) applyDelta(d deltafifo.Delta[T], isInInitialList bool) error {
	switch d.Type {
	case deltafifo.Sync, deltafifo.Replaced, deltafifo.Added, deltafifo.Updated:
		old, exists, err := s.indexer.Get(d.Object)
		if err != nil {
			return err
		}
		if exists {
			if err := s.indexer.Update(d.Object); err != nil {
				return err
			}
			if s.opts.Tracer != nil {
				s.traceApplied("update", old, true, d.Object, "")
			}
			s.distributeUpdate(old, d.Object)
			return nil
		}
		if err := s.indexer.Add(d.Object); err != nil {
			return err
		}
		s.watchForMutation(d.Object)
		if s.opts.Tracer != nil {
			s.traceApplied("add", old, false, d.Object, "")
		}
		s.processor.distribute(notification[T]{kind: addNotification, newObj: d.Object, isInInitialList: isInInitialList}, false)
	case deltafifo.Deleted:
		held := true
		if s.opts.Tracer != nil {
			// Why ask first, when tracing: a RealFIFO passes on every delete, one for an
			// object the cache never held included (client-go: processDeltas does the
			// same), and the trace should not show index values it never removed.
			_, held, _ = s.indexer.Get(d.Object)
		}
		if err := s.indexer.Delete(d.Object); err != nil {
			return err
		}
		if s.opts.Tracer != nil {
			detail := ""
			if !held {
				detail = "the cache did not hold it: nothing removed"
			}
			s.traceApplied("delete", d.Object, true, d.Object, detail)
		}
		s.processor.distribute(notification[T]{kind: deleteNotification, oldObj: d.Object, tombstone: d.Tombstone}, false)
	case deltafifo.ReplacedAll:
		if d.Info == nil {
			return fmt.Errorf("ReplacedAll delta without its list")
		}
		return s.replaceAll(d.Info.Objects, d.Info.ResourceVersion, isInInitialList)
	case deltafifo.SyncAll:
		// A resync: every cached object as an update to itself, which (same
		// resourceVersion) reaches only the handlers that are due. distributeUpdate
		// hands each to the mutation detector again, as DeltaFIFO's Sync deltas do.
		for _, obj := range s.indexer.List() {
			s.distributeUpdate(obj, obj)
		}
	case deltafifo.Bookmark:
		// The cache has nothing to do for a bookmark: the reflector already
		// recorded its resource version.
	default:
		return fmt.Errorf("unknown delta type %v", d.Type)
	}
	return nil
}

// distributeUpdate sends an update; one that did not change the resourceVersion is a
// resync (periodic, or a relist that found the object unchanged) and goes only to the
// handlers due a resync. Every update, a resync's included, first hands obj to the
// mutation detector: an object cached long ago, whose copy the detector has dropped,
// is watched again while the handlers have it.
//
// client-go: tools/cache/shared_informer.go sharedIndexInformer.OnUpdate
func (s *SharedIndexInformer[T]) distributeUpdate(old, obj T) {
	s.watchForMutation(obj)
	isSync := old.GetResourceVersion() == obj.GetResourceVersion()
	s.processor.distribute(notification[T]{kind: updateNotification, oldObj: old, newObj: obj}, isSync)
}

// replaceAll applies a RealFIFO ReplacedAll: it finds the cached objects missing
// from the list (deleted while the watch was down), swaps the cache's contents in one
// step, then notifies: first every inferred delete (with a tombstone), then an add or
// update per listed object in list order.
//
// A listed object the cache cannot index is left out of the swap as if it were
// unchanged: a cached version stays (with no notification), an uncached one stays
// absent; of a key listed twice, the last copy that can be indexed is cached. That is
// exactly what DeltaFIFO's per-object path does with them (see keepUnindexable).
// Into an empty cache (the first sync) the swap needs no comparison: see
// notifyFilled.
//
// client-go: tools/cache/controller.go processReplacedAllInfo
func (s *SharedIndexInformer[T]) replaceAll(objects []T, rv string, isInInitialList bool) error {
	cached := s.indexer.ListKeys()
	if len(cached) == 0 {
		if err := s.indexer.Replace(objects, rv); err == nil {
			s.notifyFilled(objects, isInInitialList)
			return nil
		} else if !errors.Is(err, indexer.ErrIndexFunc) {
			return err
		}
		// An object the cache cannot index: the comparing path below keeps it out.
	}
	listed := make(map[string]struct{}, len(objects))
	replacements := make([]replacement[T], 0, len(objects))
	for _, obj := range objects {
		key, err := indexer.MetaNamespaceKeyFunc(obj)
		if err != nil {
			return err
		}
		listed[key] = struct{}{}
		old, exists, err := s.indexer.GetByKey(key)
		if err != nil {
			return err
		}
		replacements = append(replacements, replacement[T]{key: key, old: old, obj: obj, existed: exists})
	}
	var deletions []indexer.DeletedFinalStateUnknown[T]
	for _, key := range cached {
		if _, ok := listed[key]; ok {
			continue
		}
		if obj, exists, err := s.indexer.GetByKey(key); err == nil && exists {
			deletions = append(deletions, indexer.DeletedFinalStateUnknown[T]{Key: key, Obj: obj})
		}
	}
	err := s.indexer.Replace(objects, rv)
	if errors.Is(err, indexer.ErrIndexFunc) {
		// The error path only: find every object an IndexFunc rejects, keep the
		// cache's state for those, and swap in the rest.
		objects = s.keepUnindexable(replacements)
		err = s.indexer.Replace(objects, rv)
	}
	if err != nil {
		return err
	}
	traced := s.opts.Tracer != nil
	for i := range deletions {
		if traced {
			s.traceApplied("delete", deletions[i].Obj, true, deletions[i].Obj, "tombstone: gone from the relist")
		}
		s.processor.distribute(notification[T]{kind: deleteNotification, oldObj: deletions[i].Obj, tombstone: &deletions[i]}, false)
	}
	for _, r := range replacements {
		switch {
		case r.rejected:
		case r.existed:
			if traced {
				s.traceApplied("update", r.old, true, r.obj, "")
			}
			s.distributeUpdate(r.old, r.obj)
		default:
			s.watchForMutation(r.obj)
			if traced {
				s.traceApplied("add", r.old, false, r.obj, "")
			}
			s.processor.distribute(notification[T]{kind: addNotification, newObj: r.obj, isInInitialList: isInInitialList}, false)
		}
	}
	return nil
}

// notifyFilled notifies the adds of a ReplacedAll that filled an empty cache — every
// informer's first sync. Nothing was cached, so nothing can have been deleted and
// every listed object is an add: replaceAll skips its comparison (a lookup per
// object and a set of every listed key, garbage the moment the swap is done) and
// notifies exactly what the comparison would have found, in list order.
func (s *SharedIndexInformer[T]) notifyFilled(objects []T, isInInitialList bool) {
	var none T
	for _, obj := range objects {
		s.watchForMutation(obj)
		if s.opts.Tracer != nil {
			s.traceApplied("add", none, false, obj, "")
		}
		s.processor.distribute(notification[T]{kind: addNotification, newObj: obj, isInInitialList: isInInitialList}, false)
	}
}

// replacement is one listed object of a ReplacedAll and what the cache held for it.
type replacement[T indexer.Object] struct {
	key      string
	old, obj T
	existed  bool
	// rejected: an IndexFunc failed on obj, so the cache keeps old (if it existed).
	rejected bool
}

// keepUnindexable runs the cache's index functions on every listed object, marks the
// ones that fail as rejected (logging each with its key), and returns the list to
// swap in. A rejected copy is left out as if it had not been listed, except that its
// key is not deleted: when no copy of the key can be indexed, the cached version (if
// any) is swapped in again.
//
// Invariant: the cache ends at the last copy of each key that was notified. Replace
// keeps the last copy of a key listed twice, so appending the cached version for a
// rejected copy after an accepted one would leave the cache behind the update the
// handlers got. DeltaFIFO's per-object path gives the same result: each copy is
// applied in turn, and a rejected one leaves the last good state.
func (s *SharedIndexInformer[T]) keepUnindexable(rs []replacement[T]) []T {
	indexers := s.indexer.GetIndexers()
	accepted := make(map[string]bool, len(rs))
	for i := range rs {
		r := &rs[i]
		for name, fn := range indexers {
			if _, err := fn(r.obj); err != nil {
				r.rejected = true
				s.logger.Error("could not apply a listed object to the cache; it keeps the object's last good state (if any) until the object changes again",
					"key", r.key, "index", name, "err", err)
				break
			}
		}
		if !r.rejected {
			accepted[r.key] = true
		}
	}
	objects := make([]T, 0, len(rs))
	for _, r := range rs {
		switch {
		case !r.rejected:
			objects = append(objects, r.obj)
		case r.existed && !accepted[r.key]:
			objects = append(objects, r.old) // twice for a key listed twice: harmless
		}
	}
	return objects
}

// watchForMutation hands an object the handlers are about to get — just cached, or
// handed out again by a resync — to the mutation detector, if there is one.
//
// client-go: tools/cache/shared_informer.go sharedIndexInformer.OnAdd, sharedIndexInformer.OnUpdate (cacheMutationDetector.AddObject)
func (s *SharedIndexInformer[T]) watchForMutation(obj T) {
	if s.mutations != nil {
		s.mutations.add(obj)
	}
}
