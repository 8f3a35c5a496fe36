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
// is all garbage at the bookmark: a key string per object, its table and the smaller
// tables it outgrew, on top of the cache being filled — the moment an informer's
// memory peaks. Measured on 100,000 Pods (bench/controlplane), dropping it, together
// with the first sync's swap without comparison (the informer's replaceAll), took
// the peak heap of the sync from 424 MB to 409 MB; the cache itself is 396 MB.
//
// Simplified: client-go buffers into a cache.Store (whose List returns map order)
// and applies the target store's transform function while buffering. Our stores
// transform in Replace, so the buffered objects are held untransformed until then:
// the same result, with a higher peak while the stream is in flight.
type initialEvents[T Object] struct {
	objects []T // in the order each key first appeared
	// byName is nil while every event so far was an ADDED after the one before in
	// key order; then it finds a key's position in objects.
	byName map[objectName]int
	// deleted holds the positions of objects deleted since they were buffered (and
	// not added again); nil until the first DELETED.
	deleted map[int]struct{}
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
		if len(b.objects) == 0 || compareKeys(nameOf(b.objects[len(b.objects)-1]), n) < 0 {
			b.objects = append(b.objects, obj)
			return nil
		}
		b.index()
	}
	if i, ok := b.byName[n]; ok {
		b.objects[i] = obj
		delete(b.deleted, i)
		return nil
	}
	b.byName[n] = len(b.objects)
	b.objects = append(b.objects, obj)
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
		if b.deleted == nil {
			b.deleted = map[int]struct{}{}
		}
		b.deleted[i] = struct{}{}
	}
	return nil
}

// index switches to the map shape. Only the slice shape calls it, where nothing
// was deleted yet.
func (b *initialEvents[T]) index() {
	b.byName = make(map[objectName]int, len(b.objects))
	for i, obj := range b.objects {
		b.byName[nameOf(obj)] = i
	}
}

// list returns the buffered objects in first-seen order: the buffer's own slice
// when nothing was deleted (the buffer is not used after it).
func (b *initialEvents[T]) list() []T {
	if len(b.deleted) == 0 {
		return b.objects
	}
	out := make([]T, 0, len(b.objects)-len(b.deleted))
	for i, obj := range b.objects {
		if _, gone := b.deleted[i]; !gone {
			out = append(out, obj)
		}
	}
	return out
}

// compareKeys compares the keys of a and b (see objects.Key: namespace/name, or the
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

// keyParts returns the strings that objects.Key joins for n.
func keyParts(n objectName) [3]string {
	if n.namespace == "" {
		return [3]string{n.name}
	}
	return [3]string{n.namespace, "/", n.name}
}
