package indexer

import (
	"fmt"
	"maps"
	"slices"
)

// ByIndex returns the objects filed under indexedValue in the named index. An unknown
// index is an error wrapping ErrUnknownIndex; an unknown value is an empty result.
//
// client-go: tools/cache/thread_safe_store.go threadSafeMap.ByIndex
func (s *store[T]) ByIndex(indexName, indexedValue string) ([]T, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ix, err := s.t.indexByName(indexName)
	if err != nil {
		return nil, err
	}
	return s.t.objectsOf(ix.sets[indexedValue]), nil
}

// IndexKeys returns the keys filed under indexedValue in the named index, sorted.
//
// Why sorted: callers use IndexKeys to enqueue work or to print; a stable order makes
// both reproducible. (ByIndex, the hot path, stays unsorted.)
//
// client-go: tools/cache/thread_safe_store.go threadSafeMap.IndexKeys
func (s *store[T]) IndexKeys(indexName, indexedValue string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ix, err := s.t.indexByName(indexName)
	if err != nil {
		return nil, err
	}
	set := ix.sets[indexedValue]
	keys := make([]string, 0, len(set))
	for pos := range set {
		keys = append(keys, *s.t.keys.at(int(pos)))
	}
	slices.Sort(keys)
	return keys, nil
}

// ListIndexFuncValues returns every value the named index currently holds (each with at
// least one key), in no particular order. An unknown index yields nil: the method has
// no error result, as in client-go.
//
// client-go: tools/cache/thread_safe_store.go threadSafeMap.ListIndexFuncValues
func (s *store[T]) ListIndexFuncValues(indexName string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ix, err := s.t.indexByName(indexName)
	if err != nil {
		return nil
	}
	return slices.AppendSeq(make([]string, 0, len(ix.sets)), maps.Keys(ix.sets))
}

// Index returns the stored objects that share at least one value with obj in the named
// index, each once. obj is only used to compute values; it need not be stored.
//
// client-go: tools/cache/thread_safe_store.go threadSafeMap.Index
func (s *store[T]) Index(indexName string, obj T) ([]T, error) {
	if isNil(obj) {
		return nil, ErrNilObject
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	ix, err := s.t.indexByName(indexName)
	if err != nil {
		return nil, err
	}
	values, err := ix.fn(obj)
	if err != nil {
		return nil, fmt.Errorf("%w: index %q: %w", ErrIndexFunc, indexName, err)
	}
	if len(values) == 1 {
		// Common case: one set, no duplicates possible, no dedup map.
		return s.t.objectsOf(ix.sets[values[0]]), nil
	}
	// Several values: an object filed under two of them must be returned once.
	seen := map[int32]struct{}{}
	list := []T{}
	for _, v := range values {
		for pos := range ix.sets[v] {
			if _, dup := seen[pos]; !dup {
				seen[pos] = struct{}{}
				list = append(list, *s.t.objs.at(int(pos)))
			}
		}
	}
	return list, nil
}

// GetIndexers returns a copy of the registered index functions.
//
// Differences from client-go: client-go returns its internal map without taking the
// lock, which races with AddIndexers and lets a caller mutate the store's indexers.
// We copy under the read lock.
//
// client-go: tools/cache/thread_safe_store.go threadSafeMap.GetIndexers
func (s *store[T]) GetIndexers() Indexers[T] {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(Indexers[T], len(s.t.indexes))
	for _, ix := range s.t.indexes {
		out[ix.name] = ix.fn
	}
	return out
}

// IndexCount returns how many indexes the store has. It is not part of Indexer: the
// informer's trace calls it through an interface check to learn, without copying
// GetIndexers' map on every write, whether an index was added since it last looked
// (a store's indexes only grow, so an unchanged count means an unchanged set).
func (s *store[T]) IndexCount() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.t.indexes)
}

// AddIndexers registers more indexes and files every stored object in them, so it works
// on a populated store (older client-go versions refused once the store held items). It is
// all or nothing: a name that already exists (ErrIndexConflict), a nil function
// (ErrNilIndexFunc) or an IndexFunc error (ErrIndexFunc) leaves the store unchanged.
//
// client-go: tools/cache/thread_safe_store.go threadSafeMap.AddIndexers
func (s *store[T]) AddIndexers(newIndexers Indexers[T]) error {
	if len(newIndexers) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.t.addIndexes(newIndexers)
}

// scan calls fn for every stored object while holding the read lock. It lets the
// Lister filter the cache without first copying all of it into a slice.
//
// Pitfall: fn runs under the read lock and must not call the store.
func (s *store[T]) scan(fn func(T)) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, page := range s.t.objs.pages {
		for _, obj := range page {
			fn(obj)
		}
	}
}

// scanIndex calls fn for every object filed under value in the named index, under the
// read lock. Same pitfall as scan.
func (s *store[T]) scanIndex(indexName, value string, fn func(T)) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ix, err := s.t.indexByName(indexName)
	if err != nil {
		return err
	}
	for pos := range ix.sets[value] {
		fn(*s.t.objs.at(int(pos)))
	}
	return nil
}

// objectsOf returns the objects at the positions of a set, in no particular order.
func (t *table[T]) objectsOf(set map[int32]struct{}) []T {
	list := make([]T, 0, len(set))
	for pos := range set {
		list = append(list, *t.objs.at(int(pos)))
	}
	return list
}
