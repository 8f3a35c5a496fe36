package reflector

import "strings"

// initialEvents buffers the initial events of a watch-list until the bookmark that
// ends them. list then gives the objects in the order they first appeared, each at its
// last state, without the ones deleted meanwhile. It is used by one goroutine.
//
// It has two shapes:
//   - A plain slice while the events are ADDEDs in strictly increasing key order.
//     That is how the kube-apiserver sends them: its watch cache keeps the objects
//     sorted by key. A strictly increasing stream cannot hold a key twice, so there
//     is nothing to look up.
//   - A map from key to position in the slice, from the first event that breaks
//     that order: a key not after the last one, a MODIFIED or a DELETED. The map is
//     built once from what the slice holds, and every later event is a lookup, as in
//     client-go's buffer.
//
// Why two: the map is needed only for a stream the apiserver does not send, and it
// is all garbage at the bookmark. For 100,000 Pods it held about 10 MB (100,000 key
// strings, its table and the smaller tables it outgrew) on top of the cache being
// filled, which is the peak an informer's memory is sized for.
//
// Simplified: client-go buffers into a cache.Store (whose List returns map order)
// and applies the target store's transform function while buffering. Our stores
// transform in Replace, so the buffered objects are held untransformed until then:
// the same result, with a higher peak while the stream is in flight.
type initialEvents[T Object] struct {
	items []bufferedObject[T] // in the order each key first appeared
	// byName is nil while every event so far was an ADDED after the one before in
	// key order; then it finds a key's position in items.
	byName map[objectName]int
}

type bufferedObject[T any] struct {
	obj     T
	present bool // false: deleted since it was buffered
}

// objectName is an object's namespace and name: its key, without building the
// string (the strings are the object's own).
type objectName struct{ namespace, name string }

func nameOf[T Object](obj T) objectName {
	return objectName{namespace: obj.GetNamespace(), name: obj.GetName()}
}

func newInitialEvents[T Object]() *initialEvents[T] { return &initialEvents[T]{} }

func (b *initialEvents[T]) Add(obj T) error {
	n := nameOf(obj)
	if b.byName == nil {
		if len(b.items) == 0 || compareKeys(nameOf(b.items[len(b.items)-1].obj), n) < 0 {
			b.items = append(b.items, bufferedObject[T]{obj: obj, present: true})
			return nil
		}
		b.index()
	}
	if i, ok := b.byName[n]; ok {
		b.items[i] = bufferedObject[T]{obj: obj, present: true}
		return nil
	}
	b.byName[n] = len(b.items)
	b.items = append(b.items, bufferedObject[T]{obj: obj, present: true})
	return nil
}

func (b *initialEvents[T]) Update(obj T) error {
	if b.byName == nil {
		b.index()
	}
	return b.Add(obj)
}

func (b *initialEvents[T]) Delete(obj T) error {
	if b.byName == nil {
		b.index()
	}
	if i, ok := b.byName[nameOf(obj)]; ok {
		b.items[i] = bufferedObject[T]{}
	}
	return nil
}

// index switches to the map shape. Only the slice shape calls it, where every item
// is present (nothing was deleted yet).
func (b *initialEvents[T]) index() {
	b.byName = make(map[objectName]int, len(b.items))
	for i, it := range b.items {
		b.byName[nameOf(it.obj)] = i
	}
}

// list returns the buffered objects in first-seen order.
func (b *initialEvents[T]) list() []T {
	out := make([]T, 0, len(b.items))
	for _, it := range b.items {
		if it.present {
			out = append(out, it.obj)
		}
	}
	return out
}

// compareKeys compares the keys of a and b (see objectKey: namespace/name, or the
// name alone for a cluster-scoped object) as strings, without building them: -1 if
// a's sorts first, 0 if they are equal, +1 otherwise.
//
// Why not compare namespace, then name: the strings differ when one namespace is a
// prefix of another. "a/x" sorts after "a-b/y" ('/' is after '-'), though "a"
// sorts before "a-b".
func compareKeys(a, b objectName) int {
	if a.namespace == b.namespace {
		return strings.Compare(a.name, b.name)
	}
	pa, pb := keyParts(a), keyParts(b)
	var x, y string // what is left of the current part of each key
	i, j := 0, 0    // the index of the next part of each key
	for {
		for x == "" && i < len(pa) {
			x, i = pa[i], i+1
		}
		for y == "" && j < len(pb) {
			y, j = pb[j], j+1
		}
		if x == "" || y == "" { // one key has ended: the shorter sorts first
			return strings.Compare(x, y)
		}
		n := min(len(x), len(y))
		if c := strings.Compare(x[:n], y[:n]); c != 0 {
			return c
		}
		x, y = x[n:], y[n:]
	}
}

// keyParts returns the strings that objectKey joins for n.
func keyParts(n objectName) [3]string {
	if n.namespace == "" {
		return [3]string{n.name}
	}
	return [3]string{n.namespace, "/", n.name}
}
