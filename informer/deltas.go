package informer

import (
	"fmt"

	"github.com/kubeinternals/informers/deltafifo"
	"github.com/kubeinternals/informers/indexer"
)

// handleDeltas applies one popped item's deltas, oldest first, under blockDeltas.
//
// client-go: tools/cache/shared_informer.go sharedIndexInformer.handleDeltas
func (s *SharedIndexInformer[T]) handleDeltas(deltas deltafifo.Deltas[T], isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	for _, d := range deltas {
		if err := s.applyDelta(d, isInInitialList); err != nil {
			return err
		}
	}
	return nil
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
			s.distributeUpdate(old, d.Object)
			return nil
		}
		if err := s.indexer.Add(d.Object); err != nil {
			return err
		}
		s.processor.distribute(notification[T]{kind: addNotification, newObj: d.Object, isInInitialList: isInInitialList}, false)
	case deltafifo.Deleted:
		if err := s.indexer.Delete(d.Object); err != nil {
			return err
		}
		s.processor.distribute(notification[T]{kind: deleteNotification, oldObj: d.Object, tombstone: d.Tombstone}, false)
	case deltafifo.ReplacedAll:
		if d.Info == nil {
			return fmt.Errorf("ReplacedAll delta without its list")
		}
		return s.replaceAll(d.Info.Objects, d.Info.ResourceVersion, isInInitialList)
	case deltafifo.SyncAll:
		// A resync: every cached object as an update to itself, which (same
		// resourceVersion) reaches only the handlers that are due.
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
// handlers due a resync.
//
// client-go: tools/cache/shared_informer.go sharedIndexInformer.OnUpdate
func (s *SharedIndexInformer[T]) distributeUpdate(old, obj T) {
	isSync := old.GetResourceVersion() == obj.GetResourceVersion()
	s.processor.distribute(notification[T]{kind: updateNotification, oldObj: old, newObj: obj}, isSync)
}

// replaceAll applies a RealFIFO ReplacedAll: it finds the cached objects missing
// from the list (deleted while the watch was down), swaps the cache's contents in one
// step, then notifies: first every inferred delete (with a tombstone), then an add or
// update per listed object in list order.
//
// client-go: tools/cache/controller.go processReplacedAllInfo
func (s *SharedIndexInformer[T]) replaceAll(objects []T, rv string, isInInitialList bool) error {
	listed := make(map[string]struct{}, len(objects))
	type replacement struct {
		old, obj T
		existed  bool
	}
	replacements := make([]replacement, 0, len(objects))
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
		replacements = append(replacements, replacement{old: old, obj: obj, existed: exists})
	}
	var deletions []indexer.DeletedFinalStateUnknown[T]
	for _, key := range s.indexer.ListKeys() {
		if _, ok := listed[key]; ok {
			continue
		}
		if obj, exists, err := s.indexer.GetByKey(key); err == nil && exists {
			deletions = append(deletions, indexer.DeletedFinalStateUnknown[T]{Key: key, Obj: obj})
		}
	}
	if err := s.indexer.Replace(objects, rv); err != nil {
		return err
	}
	for i := range deletions {
		s.processor.distribute(notification[T]{kind: deleteNotification, oldObj: deletions[i].Obj, tombstone: &deletions[i]}, false)
	}
	for _, r := range replacements {
		if r.existed {
			s.distributeUpdate(r.old, r.obj)
		} else {
			s.processor.distribute(notification[T]{kind: addNotification, newObj: r.obj, isInInitialList: isInInitialList}, false)
		}
	}
	return nil
}
