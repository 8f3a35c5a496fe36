package indexer

import (
	"fmt"
	"slices"
	"strings"
)

// cell is the stable handle of one stored key: the index sets point at it, and it
// knows where the key's data sits in the table's dense arrays.
//
// Invariant: for a live cell, obj == table.objs[pos] and the cell's key is
// table.keys[pos]. A removed cell is zeroed and goes back to the table's free list.
type cell[T Object] struct {
	obj T
	pos int
}

// table is the unlocked data of a store. The store wraps it in an RWMutex; Replace
// builds a whole new table without any lock and swaps it in.
//
// The layout is a map of handles over dense arrays (a "slot map"):
//
//	items["ns/a"] ─▶ cell{obj, pos: 1}
//	                          │
//	objs:  [ obj0 │ obj1 │ obj2 ]   what List copies and a Lister scans: sequential,
//	keys:  [ "x"  │"ns/a"│ "y"  ]   no map iteration, no pointer chasing per item
//	vals:  [ x0 x1│ a0 a1│ y0 y1]   the values each key is filed under, per index
//
// Why remember vals: to move a key out of its old index entries, client-go runs every
// IndexFunc again on the old object. We keep what the IndexFunc returned when the
// object was stored, which (1) halves the IndexFunc calls, and their allocations, per
// update, and (2) unindexes correctly even if someone mutated the cached object in place
// (a bug, but a common one: re-running the function on the mutated object describes
// the mutation, and the key stays filed under a value it no longer has).
//
// client-go: tools/cache/thread_safe_store.go threadSafeMap, storeIndex
type table[T Object] struct {
	// items maps a key to its cell.
	items map[string]*cell[T]
	// objs, keys and vals are parallel dense arrays indexed by cell.pos; vals has
	// len(indexes) entries per position: vals[pos*len(indexes)+i] is what
	// indexes[i].fn returned for objs[pos].
	// Invariant: len(objs) == len(keys) == len(items), len(vals) == len(objs)*len(indexes),
	// and the key is in exactly the sets its vals name.
	objs []T
	keys []string
	vals [][]string
	// indexes are in registration order. Invariant: a table's indexes only ever grow,
	// by AddIndexers, so a snapshot of the slice stays a valid prefix.
	indexes []*index[T]

	// free holds removed cells for reuse; chunk is the unused rest of the last block
	// of cells allocated.
	//
	// Why: one allocation per cell would make a new key cost one allocation more than
	// in client-go. Cells come in blocks (Replace allocates all of its cells at once)
	// and are recycled, so the cell memory, like a Go map's buckets, stays at the
	// peak number of keys. Objects are never retained: remove zeroes the cell.
	free  []*cell[T]
	chunk []cell[T]
}

// cellChunk is how many cells an Add that runs out of cells allocates at once.
const cellChunk = 64

// newTable returns an empty table with the same index names and functions as defs,
// sized for n items.
func newTable[T Object](defs []*index[T], n int) *table[T] {
	t := &table[T]{
		items:   make(map[string]*cell[T], n),
		objs:    make([]T, 0, n),
		keys:    make([]string, 0, n),
		vals:    make([][]string, 0, n*len(defs)),
		indexes: make([]*index[T], len(defs)),
		chunk:   make([]cell[T], n),
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

// find returns the cell of a key given either as a string or, when kb is not nil, as
// bytes; and the key as the table stores it. The cell is nil when the key is absent
// (and then, for a byte key, so is the string: only an insert needs one).
//
// Why a byte key: for the default key function the store builds "namespace/name" in a
// stack buffer. Looking it up as t.items[string(kb)] does not allocate (the compiler
// special-cases that conversion), and an existing key reuses the string the table
// already holds, so updating or deleting a known object allocates no key at all.
func (t *table[T]) find(key string, kb []byte) (string, *cell[T]) {
	if kb == nil {
		return key, t.items[key]
	}
	if c := t.items[string(kb)]; c != nil {
		return t.keys[c.pos], c
	}
	return "", nil
}

// put stores obj under key, whose cell is c (nil for a new key), and keeps every index
// in step. If an IndexFunc fails, put returns the error and the table is exactly as it
// was: all index values are computed before anything is modified.
//
// Why not panic like client-go: an IndexFunc error means this one object has data the
// function did not expect. In client-go that panic unwinds through the informer's
// processing goroutine and takes the whole controller process down; here the caller
// gets an error naming the key and the index, and the cache keeps serving.
//
// client-go: tools/cache/thread_safe_store.go threadSafeMap.updateLocked
func (t *table[T]) put(key string, c *cell[T], obj T) error {
	// Why a stack buffer: with up to four indexes the computed values need no heap
	// allocation of their own; only the IndexFuncs' results do.
	var buf [4][]string
	values, err := t.valuesOf(key, obj, buf[:0])
	if err != nil {
		return err
	}

	if c == nil {
		c = t.newCell()
		c.pos = len(t.objs)
		t.items[key] = c
		t.keys = append(t.keys, key)
		t.objs = append(t.objs, obj)
		t.vals = append(t.vals, values...)
		for i, ix := range t.indexes {
			ix.refile(key, c, nil, values[i])
		}
		c.obj = obj
		return nil
	}

	old := t.vals[c.pos*len(t.indexes):][:len(t.indexes)]
	for i, ix := range t.indexes {
		if sameValues(old[i], values[i]) {
			continue // the fast path: nothing moves, nothing is allocated
		}
		ix.refile(key, c, old[i], values[i])
		old[i] = values[i]
	}
	c.obj = obj
	t.objs[c.pos] = obj
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
	block := t.chunk
	for i, obj := range items {
		key, err := keyOf(obj)
		if err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
		if c, dup := t.items[key]; dup {
			// Overwrite the earlier duplicate's values in place.
			if _, err := t.valuesOf(key, obj, t.vals[c.pos*n:c.pos*n]); err != nil {
				return err
			}
			c.obj = obj
			t.objs[c.pos] = obj
			continue
		}
		if t.vals, err = t.valuesOf(key, obj, t.vals); err != nil {
			return err
		}
		c := t.newCell()
		c.obj, c.pos = obj, len(t.objs)
		t.items[key] = c
		t.keys = append(t.keys, key)
		t.objs = append(t.objs, obj)
	}

	// Cells were taken from the fresh table's single block in position order, so the
	// cell of position pos is cells[pos]: no map lookup needed.
	cells := block[:len(t.objs)]
	seq := make([]int32, 0, len(t.objs)) // reused by every index
	for i, ix := range t.indexes {
		// First pass: number the distinct values, count the keys of each, and note the
		// number of every value in position order.
		ids := map[string]int32{}
		var values []string
		var sizes []int
		seq = seq[:0]
		for pos := range t.objs {
			for _, v := range t.vals[pos*n+i] {
				id, seen := ids[v]
				if !seen {
					id = int32(len(values))
					ids[v] = id
					values = append(values, v)
					sizes = append(sizes, 0)
				}
				sizes[id]++
				seq = append(seq, id)
			}
		}
		// Second pass: allocate each set at its final size and fill it.
		sets := make([]map[string]*cell[T], len(values))
		for id, v := range values {
			sets[id] = make(map[string]*cell[T], sizes[id])
			ix.sets[v] = sets[id]
		}
		next := 0
		for pos, key := range t.keys {
			for range t.vals[pos*n+i] {
				sets[seq[next]][key] = &cells[pos]
				next++
			}
		}
	}
	return nil
}

// remove deletes key, whose cell is c, and its index entries. The dense arrays stay
// dense by moving the last position into the hole.
//
// client-go: tools/cache/thread_safe_store.go threadSafeMap.deleteLocked
func (t *table[T]) remove(key string, c *cell[T]) {
	n := len(t.indexes)
	for i, ix := range t.indexes {
		for _, v := range t.vals[c.pos*n+i] {
			ix.removeValue(key, v)
		}
	}
	delete(t.items, key)

	last := len(t.objs) - 1
	if c.pos != last {
		t.objs[c.pos] = t.objs[last]
		t.keys[c.pos] = t.keys[last]
		copy(t.vals[c.pos*n:(c.pos+1)*n], t.vals[last*n:])
		t.items[t.keys[c.pos]].pos = c.pos
	}
	// Pitfall: clear before truncating, or the spare capacity keeps the deleted
	// object (and its value slices) reachable — the "list results stay in memory"
	// leak of kubernetes#113305 in miniature.
	var zero T
	t.objs[last] = zero
	t.keys[last] = ""
	clear(t.vals[last*n:])
	t.objs, t.keys, t.vals = t.objs[:last], t.keys[:last], t.vals[:last*n]

	*c = cell[T]{}
	t.free = append(t.free, c)
}

// newCell returns a zeroed cell: a recycled one, or the next of the current block.
func (t *table[T]) newCell() *cell[T] {
	if n := len(t.free); n > 0 {
		c := t.free[n-1]
		t.free = t.free[:n-1]
		return c
	}
	if len(t.chunk) == 0 {
		t.chunk = make([]cell[T], cellChunk)
	}
	c := &t.chunk[0]
	t.chunk = t.chunk[1:]
	return c
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
	vals := make([][]string, len(t.objs)*newN)
	for pos := range t.objs {
		copy(vals[pos*newN:], t.vals[pos*oldN:(pos+1)*oldN])
	}
	added := make([]*index[T], len(names))
	for j, name := range names {
		ix := newIndex(name, newIndexers[name])
		for pos, obj := range t.objs {
			key := t.keys[pos]
			v, err := ix.fn(obj)
			if err != nil {
				return fmt.Errorf("%w: index %q, key %q: %w", ErrIndexFunc, name, key, err)
			}
			ix.refile(key, t.items[key], nil, v)
			vals[pos*newN+oldN+j] = v
		}
		added[j] = ix
	}
	t.indexes = append(t.indexes, added...)
	t.vals = vals
	return nil
}
