package indexer

import (
	"fmt"
	"slices"
	"strings"
)

// table is the unlocked data of a store. The store wraps it in an RWMutex; Replace
// builds a whole new table without any lock and swaps it in.
//
// The layout is a map of positions over dense arrays:
//
//	items["ns/a"] ─▶ 1
//	                 │
//	objs:  [ obj0 │ obj1 │ obj2 ]   what List copies and a Lister scans: sequential,
//	keys:  [ "x"  │"ns/a"│ "y"  ]   no map iteration, no pointer chasing per item
//	vals:  [ x0 x1│ a0 a1│ y0 y1]   the values each key is filed under, per index
//
// and every index maps a value to the set of positions filed under it. A position is
// an int32: a set entry is four bytes, and ByIndex reads objs[pos] directly.
//
// Why remember vals: to move a key out of its old index entries, client-go runs every
// IndexFunc again on the old object. We keep what the IndexFunc returned when the
// object was stored, which (1) halves the IndexFunc calls, and their allocations, per
// update, and (2) unindexes correctly even if someone mutated the cached object in place
// (a bug, but a common one: re-running the function on the mutated object describes
// the mutation, and the key stays filed under a value it no longer has). Each entry is
// one string (see values.go): for the usual single value, just that value.
//
// Why positions and not pointers to per-key handles: a handle would be an allocation
// (or a slot in a block) per key and 8 more bytes in every set entry. The price is
// that removing a key moves the last position into the hole, and the moved key must
// be re-filed under its new position in each of its index sets (see remove).
//
// client-go: tools/cache/thread_safe_store.go threadSafeMap, storeIndex
type table[T Object] struct {
	// items maps a key to its position.
	items map[string]int32
	// objs, keys and vals are parallel dense arrays indexed by position; vals has
	// len(indexes) entries per position: vals[pos*len(indexes)+i] is what
	// indexes[i].fn returned for objs[pos], encoded by encodeValues.
	// Invariant: len(objs) == len(keys) == len(items), len(vals) == len(objs)*len(indexes),
	// items[keys[pos]] == pos, and pos is in exactly the sets its vals name.
	//
	// Each is a column (column.go): pages of fixed size, so that growing one key at a
	// time never copies what is already stored.
	objs column[T]
	keys column[string]
	vals column[string]
	// indexes are in registration order. Invariant: a table's indexes only ever grow,
	// by AddIndexers, so a snapshot of the slice stays a valid prefix.
	indexes []*index[T]
}

// newTable returns an empty table with the same index names and functions as defs,
// sized for n items.
func newTable[T Object](defs []*index[T], n int) *table[T] {
	t := &table[T]{
		items:   make(map[string]int32, n),
		objs:    newColumn[T](n),
		keys:    newColumn[string](n),
		vals:    newColumn[string](n * len(defs)),
		indexes: make([]*index[T], len(defs)),
	}
	for i, d := range defs {
		t.indexes[i] = newIndex(d.name, d.fn)
	}
	return t
}

// indexByName returns the index with this name, or an error wrapping ErrUnknownIndex.
// Why a linear search: a store has a handful of indexes, and comparing a few short
// strings beats hashing.
func (t *table[T]) indexByName(name string) (*index[T], error) {
	for _, ix := range t.indexes {
		if ix.name == name {
			return ix, nil
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownIndex, name)
}

// find returns the position of a key given either as a string or, when kb is not nil,
// as bytes; the key as the table stores it; and whether it is there. For an absent
// byte key the string is empty too: only an insert needs one.
//
// Why a byte key: for the default key function the store builds "namespace/name" in a
// stack buffer. Looking it up as t.items[string(kb)] does not allocate (the compiler
// special-cases that conversion), and an existing key reuses the string the table
// already holds, so updating or deleting a known object allocates no key at all.
func (t *table[T]) find(key string, kb []byte) (string, int32, bool) {
	if kb == nil {
		pos, ok := t.items[key]
		return key, pos, ok
	}
	if pos, ok := t.items[string(kb)]; ok {
		return *t.keys.at(int(pos)), pos, true
	}
	return "", 0, false
}

// put stores obj under key — at pos when exists, else at a new position — and keeps every index
// in step. If an IndexFunc fails, put returns the error and the table is exactly as it
// was: all index values are computed before anything is modified.
//
// Why not panic like client-go: an IndexFunc error means this one object has data the
// function did not expect. In client-go that panic unwinds through the informer's
// processing goroutine and takes the whole controller process down; here the caller
// gets an error naming the key and the index, and the cache keeps serving.
//
// client-go: tools/cache/thread_safe_store.go threadSafeMap.updateLocked
func (t *table[T]) put(key string, pos int32, exists bool, obj T) error {
	// Why a stack buffer: with up to four indexes the computed values need no heap
	// allocation of their own; only the IndexFuncs' results do.
	var buf [4][]string
	values, err := t.valuesOf(key, obj, buf[:0])
	if err != nil {
		return err
	}

	if !exists {
		pos = int32(t.objs.len())
		t.items[key] = pos
		t.keys.push(key)
		t.objs.push(obj)
		for i, ix := range t.indexes {
			t.vals.push(encodeValues(values[i]))
			ix.refile(pos, nil, values[i])
		}
		return nil
	}

	n := len(t.indexes)
	for i, ix := range t.indexes {
		stored := t.vals.at(int(pos)*n + i)
		if encodedEqual(*stored, values[i]) {
			continue // the fast path: nothing moves, nothing is allocated
		}
		var ob [4]string
		ix.refile(pos, decodeValues(*stored, ob[:0]), values[i])
		*stored = encodeValues(values[i])
	}
	*t.objs.at(int(pos)) = obj
	return nil
}

// valuesOf appends obj's values in every index to dst, or returns the first IndexFunc
// error, naming the index and the key.
func (t *table[T]) valuesOf(key string, obj T, dst [][]string) ([][]string, error) {
	for _, ix := range t.indexes {
		v, err := ix.fn(obj)
		if err != nil {
			return nil, fmt.Errorf("%w: index %q, key %q: %w", ErrIndexFunc, ix.name, key, err)
		}
		dst = append(dst, v)
	}
	return dst, nil
}

// load fills a table fresh from newTable(defs, len(items)) with items, as Replace needs:
// with duplicate keys the last one wins. On an error the table is half built and must
// be dropped.
//
// Why not put each item: put grows every index set one key at a time, so a set that
// ends with hundreds of keys is reallocated and rehashed several times on the way. load
// first files everything in the dense arrays, counts how many keys each value gets, and
// then allocates every set once, at its final size. (In BenchmarkIndexerReplace this
// roughly halved the time of a 10,000-object Replace.)
func (t *table[T]) load(items []T, keyOf func(T) (string, error)) error {
	n := len(t.indexes)
	var buf [4][]string
	for i, obj := range items {
		key, err := keyOf(obj)
		if err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
		values, err := t.valuesOf(key, obj, buf[:0])
		if err != nil {
			return err
		}
		if pos, dup := t.items[key]; dup {
			// Overwrite the earlier duplicate in place.
			for i := range values {
				*t.vals.at(int(pos)*n + i) = encodeValues(values[i])
			}
			*t.objs.at(int(pos)) = obj
			continue
		}
		for i := range values {
			t.vals.push(encodeValues(values[i]))
		}
		t.items[key] = int32(t.objs.len())
		t.keys.push(key)
		t.objs.push(obj)
	}

	// filings lists, for one index, every (position, value number) in position order;
	// reused by every index.
	type filing struct{ pos, id int32 }
	filings := make([]filing, 0, t.objs.len())
	var vb [8]string
	for i, ix := range t.indexes {
		// First pass: number the distinct values, count the positions of each, and
		// note every filing.
		ids := map[string]int32{}
		var values []string
		var sizes []int
		filings = filings[:0]
		for pos := range t.objs.len() {
			for _, v := range decodeValues(*t.vals.at(pos*n + i), vb[:0]) {
				id, seen := ids[v]
				if !seen {
					id = int32(len(values))
					ids[v] = id
					values = append(values, v)
					sizes = append(sizes, 0)
				}
				sizes[id]++
				filings = append(filings, filing{int32(pos), id})
			}
		}
		// Second pass: allocate each set at its final size and fill it.
		sets := make([]map[int32]struct{}, len(values))
		for id, v := range values {
			sets[id] = make(map[int32]struct{}, sizes[id])
			ix.sets[v] = sets[id]
		}
		for _, f := range filings {
			sets[f.id][f.pos] = struct{}{}
		}
	}
	return nil
}

// remove deletes key, stored at pos, and its index entries. The dense arrays stay
// dense by moving the last position into the hole; the moved key is re-filed under
// its new position in every set that holds it.
//
// client-go: tools/cache/thread_safe_store.go threadSafeMap.deleteLocked
func (t *table[T]) remove(key string, pos int32) {
	n := len(t.indexes)
	var ob [8]string
	for i, ix := range t.indexes {
		for _, v := range decodeValues(*t.vals.at(int(pos)*n + i), ob[:0]) {
			ix.removeValue(v, pos)
		}
	}
	delete(t.items, key)

	last := int32(t.objs.len() - 1)
	if pos != last {
		for i, ix := range t.indexes {
			lastVal := t.vals.at(int(last)*n + i)
			for _, v := range decodeValues(*lastVal, ob[:0]) {
				ix.moveValue(v, last, pos)
			}
			*t.vals.at(int(pos)*n + i) = *lastVal
		}
		*t.objs.at(int(pos)) = *t.objs.at(int(last))
		*t.keys.at(int(pos)) = *t.keys.at(int(last))
		t.items[*t.keys.at(int(pos))] = pos
	}
	// pop clears what it removes (see column.pop).
	t.objs.pop()
	t.keys.pop()
	for range n {
		t.vals.pop()
	}
}

// addIndexes registers the new index functions and files every stored object in them.
// It is all or nothing: a name conflict, a nil function or a failing IndexFunc leaves
// the table unchanged, because the new indexes and the widened vals array are built
// completely before anything is attached.
//
// client-go: tools/cache/thread_safe_store.go threadSafeMap.AddIndexers
func (t *table[T]) addIndexes(newIndexers Indexers[T]) error {
	names := make([]string, 0, len(newIndexers))
	var conflicts []string
	for name, fn := range newIndexers {
		if fn == nil {
			return fmt.Errorf("%w: %q", ErrNilIndexFunc, name)
		}
		if _, err := t.indexByName(name); err == nil {
			conflicts = append(conflicts, name)
		}
		names = append(names, name)
	}
	if len(conflicts) > 0 {
		slices.Sort(conflicts)
		return fmt.Errorf("%w: %s", ErrIndexConflict, strings.Join(conflicts, ", "))
	}
	// Why sorted: map order is random; a fixed order makes the index order, and which
	// failing IndexFunc is reported first, reproducible.
	slices.Sort(names)

	oldN, newN := len(t.indexes), len(t.indexes)+len(names)
	added := make([]*index[T], len(names))
	for j, name := range names {
		added[j] = newIndex(name, newIndexers[name])
	}
	// The widened vals: each position's old values, then its values in the new indexes.
	count := t.objs.len()
	vals := newColumn[string](count * newN)
	for pos := range count {
		for i := range oldN {
			vals.push(*t.vals.at(pos*oldN + i))
		}
		for _, ix := range added {
			v, err := ix.fn(*t.objs.at(pos))
			if err != nil {
				return fmt.Errorf("%w: index %q, key %q: %w", ErrIndexFunc, ix.name, *t.keys.at(pos), err)
			}
			ix.refile(int32(pos), nil, v)
			vals.push(encodeValues(v))
		}
	}
	t.indexes = append(t.indexes, added...)
	t.vals = vals
	return nil
}
