package indexer

import (
	"fmt"
	"maps"
	"slices"
	"sync"
)

// Store is a thread-safe, keyed collection of objects: the informer's cache.
// Every object is stored under the key its KeyFunc gives it.
//
// client-go: tools/cache/store.go Store
type Store[T Object] interface {
	// Add stores obj, replacing any object with the same key. Same as Update.
	Add(obj T) error
	// Update stores obj, replacing any object with the same key. Same as Add.
	Update(obj T) error
	// Delete removes the object with obj's key. Only the key of obj is used, so the
	// last known (possibly stale) state is fine. Deleting an absent key is a no-op.
	Delete(obj T) error
	// List returns every stored object, in no particular order.
	List() []T
	// ListKeys returns every key, in no particular order.
	ListKeys() []string
	// Get returns the stored object with obj's key.
	Get(obj T) (item T, exists bool, err error)
	// GetByKey returns the object stored under key.
	GetByKey(key string) (item T, exists bool, err error)
	// Replace makes items the entire content of the store, atomically.
	Replace(items []T, resourceVersion string) error
	// Resync is a no-op for a store; it exists so that a store and a queue can be
	// driven through one interface.
	Resync() error
}

// Indexer is a Store with secondary indexes: named functions that map an object to a
// list of values, and per index a map from each value to the keys of the objects that
// produced it.
//
// Differences from client-go: this is client-go 1.37's TypedIndexer[T] without an
// untyped Indexer underneath: Index, ByIndex and AddIndexers are typed themselves
// (its TypedIndex, ByTypedIndex and AddTypedIndexers), so no result is type-asserted.
//
// client-go: tools/cache/index.go TypedIndexer, Indexer
type Indexer[T Object] interface {
	Store[T]
	// Index returns the stored objects that share at least one value with obj in the
	// named index (obj itself need not be stored).
	Index(indexName string, obj T) ([]T, error)
	// IndexKeys returns the keys filed under indexedValue, sorted.
	IndexKeys(indexName, indexedValue string) ([]string, error)
	// ListIndexFuncValues returns every value the named index holds, in no particular
	// order; nil for an unknown index.
	ListIndexFuncValues(indexName string) []string
	// ByIndex returns the objects filed under indexedValue, in no particular order.
	ByIndex(indexName, indexedValue string) ([]T, error)
	// GetIndexers returns a copy of the registered index functions.
	GetIndexers() Indexers[T]
	// AddIndexers registers more indexes and files every stored object in them.
	AddIndexers(newIndexers Indexers[T]) error
}

// Options configure New. The zero value is a store keyed by namespace/name with no
// indexes.
type Options[T Object] struct {
	// KeyFunc computes an object's key. Nil means MetaNamespaceKeyFunc.
	KeyFunc KeyFunc[T]
	// Indexers are the indexes the store starts with. A nil IndexFunc is reported as
	// an ErrNilIndexFunc error by the first write that needs it.
	Indexers Indexers[T]
}

// New returns an empty, thread-safe Indexer.
//
// client-go: tools/cache/store.go NewIndexer
func New[T Object](opts Options[T]) Indexer[T] {
	keyFunc := opts.KeyFunc
	if keyFunc == nil {
		keyFunc = MetaNamespaceKeyFunc[T]
	}
	names := slices.Sorted(maps.Keys(opts.Indexers))
	defs := make([]*index[T], len(names))
	for i, name := range names {
		defs[i] = newIndex(name, opts.Indexers[name])
	}
	return &store[T]{keyFunc: keyFunc, metaKeys: opts.KeyFunc == nil, t: newTable(defs, 0)}
}

// store is the Indexer implementation: a KeyFunc in front of a table guarded by an
// RWMutex. Readers share the lock; writers hold it exclusively.
//
// client-go: tools/cache/store.go cache, tools/cache/thread_safe_store.go threadSafeMap
type store[T Object] struct {
	// keyFunc is set once by New; immutable, so it needs no lock.
	keyFunc KeyFunc[T]
	// metaKeys is true when keyFunc is the default, MetaNamespaceKeyFunc: the store
	// then builds keys itself in a stack buffer (see keyOf). Immutable.
	metaKeys bool

	mu sync.RWMutex
	// t is the current table. Guarded by mu: the pointer (Replace swaps it) and
	// everything it points to, except an index's name and fn, which never change
	// after the index is created (Replace reads them without the lock).
	t *table[T]
}

// key computes obj's key, rejecting nil objects whatever the KeyFunc.
func (s *store[T]) key(obj T) (string, error) {
	if isNil(obj) {
		return "", ErrNilObject
	}
	key, err := s.keyFunc(obj)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrKeyFunc, err)
	}
	return key, nil
}

// keyBufSize fits every valid key: a namespace (63) + "/" + a name (253).
const keyBufSize = 320

// keyOf computes obj's key: for the default key function as bytes appended to buf
// (kb, never nil then), which the caller keeps on its stack; otherwise as the string
// the KeyFunc returns. Nil objects are rejected whatever the KeyFunc.
//
// Pitfall: the string and the bytes are separate results on purpose. Escape analysis
// does not tell a struct's fields apart: a struct holding both would let the string's
// escape (the table keeps it) drag the stack buffer to the heap.
func (s *store[T]) keyOf(obj T, buf []byte) (key string, kb []byte, err error) {
	if isNil(obj) {
		return "", nil, ErrNilObject
	}
	if s.metaKeys {
		return "", appendObjectKey(buf, obj.GetNamespace(), obj.GetName()), nil
	}
	if key, err = s.keyFunc(obj); err != nil {
		return "", nil, fmt.Errorf("%w: %w", ErrKeyFunc, err)
	}
	return key, nil, nil
}

// Add stores obj. See Update.
//
// client-go: tools/cache/store.go cache.Add
func (s *store[T]) Add(obj T) error { return s.Update(obj) }

// Update stores obj under its key and re-files it in every index. On an error (a nil
// object, a failing KeyFunc or IndexFunc) nothing changes.
//
// client-go: tools/cache/store.go cache.Update
func (s *store[T]) Update(obj T) error {
	var buf [keyBufSize]byte
	key, kb, err := s.keyOf(obj, buf[:0])
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	stored, pos, exists := s.t.find(key, kb)
	switch {
	case exists:
		key = stored
	case kb != nil:
		key = string(kb) // a new key: now the table needs a string of its own
	}
	return s.t.put(key, pos, exists, obj)
}

// Delete removes the object stored under obj's key, if any.
//
// client-go: tools/cache/store.go cache.Delete
func (s *store[T]) Delete(obj T) error {
	var buf [keyBufSize]byte
	key, kb, err := s.keyOf(obj, buf[:0])
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if key, pos, exists := s.t.find(key, kb); exists {
		s.t.remove(key, pos)
	}
	return nil
}

// List returns every stored object.
//
// client-go: tools/cache/thread_safe_store.go threadSafeMap.List
func (s *store[T]) List() []T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.t.objs.appendAll(make([]T, 0, s.t.objs.len()))
}

// ListKeys returns every key.
//
// client-go: tools/cache/thread_safe_store.go threadSafeMap.ListKeys
func (s *store[T]) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.t.keys.appendAll(make([]string, 0, s.t.keys.len()))
}

// Get returns the object stored under obj's key.
//
// client-go: tools/cache/store.go cache.Get
func (s *store[T]) Get(obj T) (item T, exists bool, err error) {
	var buf [keyBufSize]byte
	key, kb, err := s.keyOf(obj, buf[:0])
	if err != nil {
		return item, false, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, pos, exists := s.t.find(key, kb); exists {
		return *s.t.objs.at(int(pos)), true, nil
	}
	return item, false, nil
}

// GetByKey returns the object stored under key. The error is always nil; it is there
// so that other Store implementations can fail.
//
// client-go: tools/cache/store.go cache.GetByKey
func (s *store[T]) GetByKey(key string) (item T, exists bool, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if pos, ok := s.t.items[key]; ok {
		return *s.t.objs.at(int(pos)), true, nil
	}
	return item, false, nil
}

// getByKeyBytes is GetByKey for a key held in bytes: the map lookup converts it
// without allocating.
func (s *store[T]) getByKeyBytes(kb []byte) (item T, exists bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, pos, ok := s.t.find("", kb); ok {
		return *s.t.objs.at(int(pos)), true
	}
	return item, false
}

// Replace makes items the whole content of the store and rebuilds every index. It is
// atomic: on any error (a nil object, a failing KeyFunc or IndexFunc) the store keeps
// its old content. With duplicate keys in items, the last one wins.
//
// Why the new table is built without the lock: a relist of a large resource calls
// Replace with tens of thousands of objects; building under the write lock would stall
// every reader (listers in every worker) for the whole rebuild. We build off to the side
// and hold the lock only to swap one pointer. A write that lands during the build is
// simply ordered before the Replace, which overwrites everything anyway.
//
// Simplified: client-go records resourceVersion for LastStoreSyncResourceVersion; we
// ignore it (see doc.go).
//
// client-go: tools/cache/store.go cache.Replace, tools/cache/thread_safe_store.go threadSafeMap.Replace
func (s *store[T]) Replace(items []T, resourceVersion string) error {
	s.mu.RLock()
	defs := s.t.indexes // a snapshot: a table's indexes only ever grow, by append
	s.mu.RUnlock()

	fresh := newTable(defs, len(items))
	if err := fresh.load(items, s.key); err != nil {
		return fmt.Errorf("replace: %w", err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	// AddIndexers may have run during the build: file the new table in any index it
	// does not have yet. (Compared by name, not position: two tables may hold the same
	// indexes in different orders.)
	var missing Indexers[T]
	for _, ix := range s.t.indexes {
		if _, err := fresh.indexByName(ix.name); err != nil {
			if missing == nil {
				missing = Indexers[T]{}
			}
			missing[ix.name] = ix.fn
		}
	}
	if len(missing) > 0 {
		if err := fresh.addIndexes(missing); err != nil {
			return fmt.Errorf("replace: %w", err)
		}
	}
	s.t = fresh
	return nil
}

// Resync does nothing: a store has no queue to replay into.
//
// client-go: tools/cache/store.go cache.Resync
func (s *store[T]) Resync() error { return nil }
