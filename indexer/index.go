package indexer

// IndexFunc computes the values an object is indexed under in one index. It may return
// several values (an object with two owners is found under both) or none (the object is
// simply absent from that index).
//
// Pitfall: an IndexFunc usually runs while the store's lock is held, blocking readers
// and writers, so it must be quick and must not call back into the store (that
// deadlocks). It must be deterministic for a
// given object. The store keeps the values it returns (as strings, not the slice)
// until the object changes.
//
// Differences from client-go: this is client-go 1.37's TypedIndexFunc[T]; its untyped
// IndexFunc, which gets an interface{}, has no counterpart.
//
// client-go: tools/cache/index.go TypedIndexFunc, IndexFunc
type IndexFunc[T any] func(obj T) ([]string, error)

// Indexers maps an index name to the function that computes its values.
//
// Differences from client-go: this is client-go 1.37's TypedIndexers[T]; there is no
// untyped map to convert it to (TypedIndexersToIndexers).
//
// client-go: tools/cache/index.go TypedIndexers, Indexers
type Indexers[T any] map[string]IndexFunc[T]

// NamespaceIndex is the conventional name of the index by namespace. A Lister's
// Namespace(ns).List uses an index with this name when the store has one.
//
// client-go: tools/cache/index.go NamespaceIndex
const NamespaceIndex = "namespace"

// MetaNamespaceIndexFunc indexes an object by its namespace; a cluster-scoped object is
// indexed under "".
//
// client-go: tools/cache/index.go MetaNamespaceIndexFunc
func MetaNamespaceIndexFunc[T Object](obj T) ([]string, error) {
	if isNil(obj) {
		return nil, ErrNilObject
	}
	return []string{obj.GetNamespace()}, nil
}

// index is one named index of a table: its function and, for every value the function
// produced, the set of keys filed under it.
//
// client-go keeps Indices[name] = value → set of keys and, to answer ByIndex, looks
// every key up again in the items map. Our sets hold positions in the table's dense
// arrays, so ByIndex reads objects straight out of objs, a set entry is four bytes,
// and an update that keeps the values does not touch the set at all.
//
// Invariant: no set is empty. A set whose last key leaves is deleted, so churn through
// many distinct values (pod IPs, node names) does not leave empty maps behind.
// (client-go: tools/cache/thread_safe_store.go storeIndex.deleteKeyFromIndex, #84959.)
//
// Not safe for concurrent use; the owning store's lock guards it.
type index[T Object] struct {
	name string
	fn   IndexFunc[T]
	// sets maps an indexed value to the positions of the keys filed under it.
	sets map[string]map[int32]struct{}
}

func newIndex[T Object](name string, fn IndexFunc[T]) *index[T] {
	if fn == nil {
		// Why: New cannot return an error, so a nil function becomes one that fails
		// on first use with a message naming the index, instead of a nil-call panic.
		fn = func(T) ([]string, error) { return nil, ErrNilIndexFunc }
	}
	return &index[T]{name: name, fn: fn, sets: map[string]map[int32]struct{}{}}
}

// refile moves the key at pos from the old values to the new ones. Only values that
// differ are touched, so a multi-valued index where one value changed does not rebuild
// the sets of the values that stayed. Callers skip it entirely when old and new are
// equal.
//
// client-go: tools/cache/thread_safe_store.go storeIndex.updateSingleIndex
func (ix *index[T]) refile(pos int32, old, new []string) {
	for _, v := range old {
		if !contains(new, v) {
			ix.removeValue(v, pos)
		}
	}
	for _, v := range new {
		if !contains(old, v) {
			ix.addValue(v, pos)
		}
	}
}

func (ix *index[T]) addValue(value string, pos int32) {
	set := ix.sets[value]
	if set == nil {
		set = map[int32]struct{}{}
		ix.sets[value] = set
	}
	set[pos] = struct{}{}
}

// removeValue takes pos out of one value's set and deletes the set if it became empty.
//
// client-go: tools/cache/thread_safe_store.go storeIndex.deleteKeyFromIndex
func (ix *index[T]) removeValue(value string, pos int32) {
	set := ix.sets[value]
	if set == nil {
		return // a value listed twice was already handled
	}
	delete(set, pos)
	if len(set) == 0 {
		delete(ix.sets, value)
	}
}

// moveValue re-files, in one value's set, the key at from under its new position to:
// the table moved it there to fill a hole.
func (ix *index[T]) moveValue(value string, from, to int32) {
	set := ix.sets[value]
	if set == nil {
		return // a value listed twice was already handled
	}
	if _, ok := set[from]; ok {
		delete(set, from)
		set[to] = struct{}{}
	}
}

// contains is a linear search: index value lists are short (usually one element), and
// a map here would allocate on every update.
func contains(values []string, v string) bool {
	for _, x := range values {
		if x == v {
			return true
		}
	}
	return false
}

// sameValues reports whether an update leaves the key's entries in an index where they
// are: the same values in the same order. It is the fast path of every update: the
// common case is one value that did not change (an object's namespace never does), and
// then the index costs one string comparison and no allocation.
func sameValues(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
