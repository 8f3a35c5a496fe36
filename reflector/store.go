package reflector

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Object is what a reflector lists and watches: a Kubernetes API object with a kind
// (runtime.Object) and object metadata (metav1.Object). Typed objects such as
// *corev1.ConfigMap satisfy it, and so does *unstructured.Unstructured.
//
// Why a copy of indexer.Object: the reflector imports nothing from the store layer
// (the consumer owns the interface, see docs/design.md). The two constraints have the same
// method set, so any T that satisfies one satisfies the other.
type Object interface {
	runtime.Object
	metav1.Object
}

// Store is everything the reflector asks of the place it writes to. DeltaFIFO, RealFIFO
// and the indexer all satisfy it; the reflector never reads from it.
//
// Invariant: the reflector calls Replace once per successful (re)list with the complete
// set of objects and the list's resource version, and Add/Update/Delete once per watch
// event, in the order the server sent them, all from the goroutine running Run.
// Pitfall: Resync comes from the resync goroutine and may run while a watch event is
// being applied, so a Store must be safe for concurrent use.
//
// client-go: tools/cache/reflector.go ReflectorStore
type Store[T any] interface {
	// Add records an object the watch reported as created.
	Add(obj T) error
	// Update records an object the watch reported as modified.
	Update(obj T) error
	// Delete records an object the watch reported as deleted; obj is its last state.
	Delete(obj T) error
	// Replace swaps the whole content for items, the result of a list at
	// resourceVersion. The store takes ownership of the slice.
	Replace(items []T, resourceVersion string) error
	// Resync is called every ResyncPeriod. A queue re-delivers what it holds; a
	// plain cache may do nothing.
	Resync() error
}

// BookmarkStore is an optional interface: a store that implements it is told the
// resource version of every bookmark event (RealFIFO turns it into a Bookmark delta).
//
// client-go: tools/cache/reflector.go ReflectorBookmarkStore
type BookmarkStore interface {
	Bookmark(resourceVersion string) error
}
