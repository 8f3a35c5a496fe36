package indexer

import (
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// MutationCache lets a controller read its own writes before its informer has seen
// them. After a create or update it hands the apiserver's answer to Mutation; reads
// through the MutationCache then return, for each key, the newer of the informer's
// copy and that answer, by resourceVersion. Without it, a controller that writes and
// reads its cache again before the watch event arrived acts on the old state: it
// creates a second object where one already exists (with generateName nothing stops
// it), or reverts its own update.
//
// The written objects are kept in a small LRU (MaxCacheSize entries, each for TTL).
// An entry is dropped when the informer's copy catches up, which the cache learns in
// two ways: a read that finds the informer's copy as new or newer, and OnAddOrUpdate
// and OnDelete, which an event handler on the same informer calls
// (informer.MutationCacheHandler builds that handler).
//
// What it cannot know: an object created and deleted before the informer saw either
// event. With IncludeAdds, such an object is returned by reads until its entry
// expires (TTL) or is evicted; a controller that must not act on it checks that it
// still exists once the TTL is over.
//
// Resource versions are compared as integers, which is what etcd-backed resources
// have. A resourceVersion that is not an integer is a client's error, reported on the
// Logger; the object it came with is not remembered.
//
// Differences from client-go:
//   - GetByKey returns an object only the MutationCache holds (IncludeAdds) until its
//     entry expires or the informer catches up. client-go 1.37's returns it once: its
//     newerObject compares the entry with itself, finds it "as new as the store's" and
//     drops it.
//   - The backing store is one Indexer, serving GetByKey and ByIndex alike; client-go
//     takes a Store and an optional Indexer.
//   - A resourceVersion that is not an integer is logged and ignored; client-go panics.
//   - A negative MaxCacheSize or TTL is refused by NewMutationCache with an error;
//     client-go panics in NewIntegerResourceVersionMutationCacheWithOptions on a
//     negative size.
//   - Keys are MetaNamespaceKeyFunc's, as in client-go.
//
// client-go: tools/cache/mutation_cache.go MutationCache, mutationCache
type MutationCache[T Object] struct {
	log         *slog.Logger
	backing     Indexer[T]
	ttl         time.Duration
	includeAdds bool

	mu sync.Mutex
	// written holds, per key, the last object handed to Mutation or the deletion
	// OnDelete reported. Guarded by mu.
	written *expiringLRU[mutation[T]]
}

// mutation is an entry of the LRU: an object this client wrote, or a deletion the
// informer reported (deleted, with the deleted object's UID and resourceVersion only).
//
// Why keep deletions: a Mutation can arrive after the informer already reported the
// object's deletion (the write's answer was slow). A deletion entry with the same UID,
// or a resourceVersion at least as new, shows that Mutation to be stale.
type mutation[T Object] struct {
	obj     T // the written object; the zero T for a deletion
	deleted bool
	uid     types.UID
	rv      uint64
}

// MutationCacheOptions configure NewMutationCache. The zero value keeps up to 100
// written objects for 5 minutes each and returns only objects the informer has too.
//
// client-go: tools/cache/mutation_cache.go MutationCacheOptions
type MutationCacheOptions struct {
	// TTL is how long a written object is remembered. Zero means 5 minutes; a negative
	// TTL is an error.
	TTL time.Duration
	// IncludeAdds makes reads return written objects the informer does not have yet
	// (a create it has not seen). Without it a key the informer does not have is
	// missing, since "not seen yet" cannot be told from "deleted since".
	IncludeAdds bool
	// MaxCacheSize is how many written objects are remembered; adding one more forgets
	// the least recently used. Zero means 100; a negative size is an error.
	MaxCacheSize int
	// Logger receives the errors the cache does not return (a key or resourceVersion
	// that cannot be read). Nil means slog.Default().
	Logger *slog.Logger
}

// NewMutationCache returns a MutationCache over backing, usually an informer's
// Indexer. A negative MaxCacheSize or TTL is refused with an error wrapping
// ErrInvalidOptions that names the field.
//
// client-go: tools/cache/mutation_cache.go NewIntegerResourceVersionMutationCacheWithOptions
func NewMutationCache[T Object](backing Indexer[T], opts MutationCacheOptions) (*MutationCache[T], error) {
	if opts.MaxCacheSize < 0 {
		return nil, fmt.Errorf("%w: MaxCacheSize %d is negative (0 means 100)", ErrInvalidOptions, opts.MaxCacheSize)
	}
	if opts.TTL < 0 {
		return nil, fmt.Errorf("%w: TTL %s is negative (0 means 5m)", ErrInvalidOptions, opts.TTL)
	}
	if opts.TTL == 0 {
		opts.TTL = 5 * time.Minute
	}
	if opts.MaxCacheSize == 0 {
		opts.MaxCacheSize = 100
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &MutationCache[T]{
		log:         opts.Logger,
		backing:     backing,
		ttl:         opts.TTL,
		includeAdds: opts.IncludeAdds,
		written:     newExpiringLRU[mutation[T]](opts.MaxCacheSize),
	}, nil
}

// GetByKey returns the newer of the informer's copy of key and the object last written
// under it. With IncludeAdds, a written object the informer does not have yet is
// returned too.
//
// client-go: tools/cache/mutation_cache.go mutationCache.GetByKey
func (c *MutationCache[T]) GetByKey(key string) (T, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero T
	obj, exists, err := c.backing.GetByKey(key)
	if err != nil {
		return zero, false, err
	}
	if exists {
		return c.newer(key, obj), true, nil
	}
	if !c.includeAdds {
		return zero, false, nil
	}
	m, ok := c.written.get(key)
	if !ok || m.deleted {
		return zero, false, nil
	}
	return m.obj, true, nil
}

// ByIndex returns the objects filed under indexedValue, each the newer of the
// informer's copy and the object last written under its key. With IncludeAdds it adds
// the written objects that the index function files under indexedValue and whose keys
// the informer's index does not return — created, or moved to that value by the write.
//
// Pitfall: a written object is returned as the newer copy without checking it against
// the index again, so an update that moved an object to another value is still
// returned under the old one until the informer catches up (as in client-go).
//
// client-go: tools/cache/mutation_cache.go mutationCache.ByIndex
func (c *MutationCache[T]) ByIndex(indexName, indexedValue string) ([]T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys, err := c.backing.IndexKeys(indexName, indexedValue)
	if err != nil {
		return nil, err
	}
	var out []T
	for _, key := range keys {
		obj, exists, err := c.backing.GetByKey(key)
		if err != nil {
			return nil, err
		}
		if exists {
			out = append(out, c.newer(key, obj))
		}
	}
	if !c.includeAdds {
		return out, nil
	}
	indexFunc := c.backing.GetIndexers()[indexName]
	// Invariant: every written entry is read, least recently used first, the ones the
	// index already served included, so the LRU's order is what it was before the
	// call. Why: skipping the served ones would leave them least recently used, and the
	// next Mutation would evict the write of an object the caller just read.
	for _, key := range c.written.keys() {
		m, ok := c.written.get(key)
		if !ok || m.deleted {
			continue
		}
		if _, found := slices.BinarySearch(keys, key); found { // IndexKeys is sorted
			continue
		}
		values, err := indexFunc(m.obj)
		if err != nil {
			c.log.Debug("mutation cache: cannot index a written object", "key", key, "index", indexName, "err", err)
			continue
		}
		if slices.Contains(values, indexedValue) {
			out = append(out, m.obj)
		}
	}
	return out, nil
}

// newer returns the object written under key if it is newer than backing, the
// informer's copy; otherwise backing, forgetting the written object, which the
// informer has caught up with. Called with mu held.
func (c *MutationCache[T]) newer(key string, backing T) T {
	m, ok := c.written.get(key)
	if !ok {
		return backing
	}
	rv, err := resourceVersion(backing)
	if err != nil {
		c.log.Error("mutation cache: the informer's copy has a resourceVersion that is not an integer", "key", key, "err", err)
		return backing
	}
	if rv >= m.rv || m.deleted {
		if rv >= m.rv {
			c.written.remove(key)
		}
		return backing
	}
	return m.obj
}

// Mutation remembers obj, the apiserver's answer to this client's create or update,
// unless what the cache already holds for its key is newer, or is the deletion of
// that very object.
//
// client-go: tools/cache/mutation_cache.go mutationCache.Mutation
func (c *MutationCache[T]) Mutation(obj T) {
	key, rv, ok := c.keyAndVersion("Mutation", obj)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, held := c.written.get(key); held {
		if rv < m.rv {
			return // the cache holds a newer write
		}
		if m.deleted && (rv == m.rv || obj.GetUID() == m.uid) {
			return // this object was deleted since: the write is stale
		}
	}
	c.written.add(key, mutation[T]{obj: obj, uid: obj.GetUID(), rv: rv}, c.ttl)
}

// OnAddOrUpdate tells the cache that the informer now has obj: a written object no
// newer than it is forgotten. Call it from the informer's OnAdd and OnUpdate.
//
// client-go: tools/cache/mutation_cache.go mutationCache.OnAddOrUpdate
func (c *MutationCache[T]) OnAddOrUpdate(obj T) {
	key, rv, ok := c.keyAndVersion("OnAddOrUpdate", obj)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, held := c.written.get(key); held && rv >= m.rv {
		c.written.remove(key)
	}
}

// OnDelete tells the cache that the informer deleted obj (its last known state). A
// written object of the same UID, or not newer than obj, is forgotten, and the
// deletion is remembered so that a late Mutation of that object is recognised as
// stale. A written object of another UID and a newer resourceVersion — a recreation
// the informer has not seen yet — is kept. Call it from the informer's OnDelete.
//
// client-go: tools/cache/mutation_cache.go mutationCache.OnDelete
func (c *MutationCache[T]) OnDelete(obj T) {
	key, rv, ok := c.keyAndVersion("OnDelete", obj)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, held := c.written.get(key); held && rv < m.rv && obj.GetUID() != m.uid {
		return
	}
	c.written.add(key, mutation[T]{deleted: true, uid: obj.GetUID(), rv: rv}, c.ttl)
}

// keyAndVersion reads obj's key and resourceVersion, logging (as op) why it cannot.
func (c *MutationCache[T]) keyAndVersion(op string, obj T) (string, uint64, bool) {
	key, err := MetaNamespaceKeyFunc(obj)
	if err != nil {
		c.log.Error("mutation cache: "+op+": the object has no key", "err", err)
		return "", 0, false
	}
	rv, err := resourceVersion(obj)
	if err != nil {
		c.log.Error("mutation cache: "+op+": the object is not remembered", "key", key, "err", err)
		return "", 0, false
	}
	return key, rv, true
}

// resourceVersion reads obj's resourceVersion as an integer; "" is 0.
//
// client-go: tools/cache/mutation_cache.go etcdObjectVersioner.ObjectResourceVersion
func resourceVersion[T Object](obj T) (uint64, error) {
	s := obj.GetResourceVersion()
	if s == "" {
		return 0, nil
	}
	rv, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("resourceVersion %q is not an integer", s)
	}
	return rv, nil
}
