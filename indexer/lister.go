package indexer

import (
	"errors"

	"k8s.io/apimachinery/pkg/labels"
)

// Lister reads typed objects out of an Indexer: what a controller's workers use
// instead of GETs against the API server.
//
// client-go: listers/generic_helpers.go ResourceIndexer
type Lister[T Object] interface {
	// List returns the objects whose labels match selector, from every namespace.
	// A nil selector matches everything.
	List(selector labels.Selector) ([]T, error)
	// Get returns the cluster-scoped object with this name, or a *NotFoundError.
	Get(name string) (T, error)
	// Namespace returns a lister confined to one namespace; "" means all namespaces.
	Namespace(namespace string) NamespaceLister[T]
}

// NamespaceLister reads the objects of one namespace.
//
// client-go: listers/generic_helpers.go ResourceIndexer (built by NewNamespaced)
type NamespaceLister[T Object] interface {
	// List returns the namespace's objects whose labels match selector (nil: all).
	List(selector labels.Selector) ([]T, error)
	// Get returns the object with this name in the namespace, or a *NotFoundError.
	Get(name string) (T, error)
}

// NewLister returns a Lister over idx. It holds no state of its own.
//
// client-go: listers/generic_helpers.go New
func NewLister[T Object](idx Indexer[T]) Lister[T] {
	l := &lister[T]{idx: idx}
	l.store, _ = idx.(*store[T])
	return nsLister[T]{lister: l}
}

// lister is what every Lister and NamespaceLister over one Indexer share: the Indexer,
// and this package's store behind it if that is what it is (nil otherwise).
type lister[T Object] struct {
	idx   Indexer[T]
	store *store[T]
}

// nsLister serves both Lister (namespace "") and NamespaceLister.
//
// Why a pointer to a shared lister and not the Indexer itself: Namespace returns a new
// nsLister on every call, and putting it in an interface copies it to the heap. An
// Indexer (an interface, two words) and a namespace made that a 32-byte allocation
// per Get; a pointer and a namespace are 24 bytes, the next size class down
// (BenchmarkListerGet100k: 32 to 24 B/op, one allocation either way, and no slower:
// Get no longer asserts the Indexer's type on every call).
//
// Why not smaller still: a pointer and a string cannot take less than 24 bytes, and
// only a value that is a single pointer goes into an interface without an allocation,
// which means handing out one shared nsLister per namespace from a cache. We measured
// two (100,000 pods, one reader): a sync.Map from namespace to *nsLister allocates
// nothing but made Get 20% slower at 100 namespaces and 30% slower at 2,000 (it hashes
// the namespace and, with many namespaces, misses the CPU cache), and it keeps an
// entry for every namespace ever asked for; a fixed table of 256 slots was as slow
// and, at 2,000 namespaces, still allocated on collisions (20 B/op).
//
// client-go's row in that benchmark shows 16 B/op, its key alone, because there the
// compiler sees the concrete PodLister and keeps its 64-byte namespaced lister on the
// stack. It cannot do that for a generic type like ours (cmd/compile: "cannot
// devirtualize: shaped receiver"), nor for client-go once the lister sits in a
// controller's struct field: then client-go's Get costs 80 bytes in two allocations,
// ours 24 in one.
type nsLister[T Object] struct {
	*lister[T]
	namespace string
}

func (l nsLister[T]) Namespace(namespace string) NamespaceLister[T] {
	return nsLister[T]{lister: l.lister, namespace: namespace}
}

// Get looks the object up by key: no scan, no index.
//
// client-go: listers/generic_helpers.go ResourceIndexer.Get
func (l nsLister[T]) Get(name string) (T, error) {
	var obj T
	var exists bool
	var err error
	if sc := l.store; sc != nil {
		// Why: this package's store can look a key up from bytes built on the stack,
		// so a Get allocates no key string (client-go's allocates one per call).
		var buf [keyBufSize]byte
		obj, exists = sc.getByKeyBytes(appendObjectKey(buf[:0], l.namespace, name))
	} else {
		obj, exists, err = l.idx.GetByKey(ObjectKey(l.namespace, name))
	}
	if err != nil {
		return obj, err
	}
	if !exists {
		return obj, &NotFoundError{Namespace: l.namespace, Name: name}
	}
	return obj, nil
}

// List returns the matching objects of the lister's namespace (all namespaces when it
// is ""). In a namespace it reads the NamespaceIndex when the store has one and falls
// back to scanning everything otherwise.
//
// Differences from client-go: a nil selector means "everything" (client-go panics on
// it), and the fallback scan is silent (client-go logs a warning on every call). We
// query the index with ByIndex(NamespaceIndex, ns), where client-go calls Index with a
// fake ObjectMeta; both assume the index's values are namespaces.
//
// client-go: tools/cache/listers.go ListAllByNamespace, ListAll
func (l nsLister[T]) List(selector labels.Selector) ([]T, error) {
	if selector == nil {
		selector = labels.Everything()
	}
	if labels.MatchesNothing(selector) {
		return nil, nil
	}
	// Everything: a copy of the cache, or of the namespace's index entry, taken under
	// the read lock and sized once.
	//
	// Why not scan as below: scanning holds the read lock while the result grows; with
	// several readers listing a large namespace, that starved the informer's writes
	// (BenchmarkInformerReadsDuringUpdates at 160,000 pods: 2.2 times client-go's time
	// per write, 0.66 times with the copy). Without a namespace index, the scan below
	// filters by namespace.
	if selector.Empty() {
		if l.namespace == "" {
			return l.idx.List(), nil
		}
		if items, err := l.idx.ByIndex(NamespaceIndex, l.namespace); !errors.Is(err, ErrUnknownIndex) {
			return items, err
		}
	}
	var out []T
	collect := func(obj T) {
		if selector.Empty() || selector.Matches(labels.Set(obj.GetLabels())) {
			out = append(out, obj)
		}
	}
	collectInNamespace := func(obj T) {
		if obj.GetNamespace() == l.namespace {
			collect(obj)
		}
	}

	// Why the type assertion: this package's store can filter under its read lock
	// (scan, scanIndex) instead of first copying every object into a slice, which for a
	// selective selector saves a slice the size of the cache. Calling it through its
	// concrete type, not an interface, also lets the compiler keep the closures off
	// the heap.
	if sc := l.store; sc != nil {
		if l.namespace == "" {
			sc.scan(collect)
			return out, nil
		}
		err := sc.scanIndex(NamespaceIndex, l.namespace, collect)
		if errors.Is(err, ErrUnknownIndex) {
			sc.scan(collectInNamespace)
			return out, nil
		}
		return out, err
	}

	// Another Indexer implementation: the same logic through the public interface.
	if l.namespace == "" {
		for _, obj := range l.idx.List() {
			collect(obj)
		}
		return out, nil
	}
	items, err := l.idx.ByIndex(NamespaceIndex, l.namespace)
	if errors.Is(err, ErrUnknownIndex) {
		for _, obj := range l.idx.List() {
			collectInNamespace(obj)
		}
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, obj := range items {
		collect(obj)
	}
	return out, nil
}
