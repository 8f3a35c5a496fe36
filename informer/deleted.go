package informer

import (
	"reflect"
	"strings"

	"github.com/kubeinternals/informers/indexer"
)

// DeletedObject is what OnDelete receives: the deleted object and, when the informer
// inferred the delete from a relist instead of seeing it as a watch event, the
// tombstone. Its methods give the object's key and name in every case, so a handler
// that only enqueues a key needs neither field:
//
//	DeleteFunc: func(d informer.DeletedObject[*corev1.Pod]) { queue.Add(d.GetKey()) }
//
// Differences from client-go: FinalStateUnknown is our generic tombstone, whose Obj
// is a T and is the same object as OptionalObj; client-go's holds an interface{} that
// its typed adapter has to assert. And OptionalObj is never nil when the informer
// delivers it — a watch DELETED carries the object, and a delete inferred by a relist
// carries the last state the cache had (client-go's can be nil: a DeltaFIFO whose
// Replace found no copy of the object). Only a DeletedObject built by hand can have a
// zero OptionalObj; the methods handle that too, without calling into it.
//
// client-go: tools/cache/controller.go DeletedObject
type DeletedObject[T indexer.Object] struct {
	// OptionalObj is the deleted object: its final state for a delete seen as a watch
	// event, the last state this informer had for one inferred by a relist (then it
	// may be stale: the object may have changed before it was deleted).
	OptionalObj T
	// FinalStateUnknown is nil for a delete seen as a watch event (or made by
	// FilteringHandler for an object that stopped matching), and the tombstone for
	// one inferred by a relist: Key is the key the object was cached under, Obj the
	// same object as OptionalObj.
	FinalStateUnknown *indexer.DeletedFinalStateUnknown[T]
}

// GetObjectName returns the deleted object's namespace and name. With a tombstone it
// splits the tombstone's key at its first "/", and a key with more than one "/" is not
// an error: the rest is the name (SplitMetaNamespaceKey would reject it; a delete
// handler must not fail). Without a tombstone it reads OptionalObj, and a zero
// OptionalObj gives the zero ObjectName.
//
// client-go: tools/cache/controller.go DeletedObject.GetObjectName
func (d DeletedObject[T]) GetObjectName() indexer.ObjectName {
	if d.FinalStateUnknown != nil {
		namespace, name, found := strings.Cut(d.FinalStateUnknown.Key, "/")
		if !found {
			return indexer.ObjectName{Name: namespace}
		}
		return indexer.ObjectName{Namespace: namespace, Name: name}
	}
	if isNil(d.OptionalObj) {
		return indexer.ObjectName{}
	}
	return indexer.ObjectName{Namespace: d.OptionalObj.GetNamespace(), Name: d.OptionalObj.GetName()}
}

// GetName returns the deleted object's name, without its namespace
// (GetObjectName().Name).
//
// Why a method of that name: with GetName and GetNamespace, a DeletedObject satisfies
// the small interfaces loggers take for an object (klog.KObj's KMetadata), as client-go's does.
//
// client-go: tools/cache/controller.go DeletedObject.GetName
func (d DeletedObject[T]) GetName() string { return d.GetObjectName().Name }

// GetNamespace returns the deleted object's namespace, "" for a cluster-scoped object
// (GetObjectName().Namespace).
//
// client-go: tools/cache/controller.go DeletedObject.GetNamespace
func (d DeletedObject[T]) GetNamespace() string { return d.GetObjectName().Namespace }

// GetKey returns the key the deleted object was cached under: the tombstone's Key as
// it is, or else OptionalObj's key ("namespace/name", or the name alone), or "" for a
// zero OptionalObj. It never fails, so a delete handler can enqueue it directly.
//
// client-go: tools/cache/controller.go DeletedObject.GetKey
func (d DeletedObject[T]) GetKey() string {
	if d.FinalStateUnknown != nil {
		return d.FinalStateUnknown.Key
	}
	if isNil(d.OptionalObj) {
		return ""
	}
	return indexer.ObjectKey(d.OptionalObj.GetNamespace(), d.OptionalObj.GetName())
}

// isNil reports whether obj is a nil interface or holds a nil pointer — a zero T for
// the pointer types an informer holds — so that DeletedObject never calls a method on it.
//
// Why not obj == zero T, as client-go does: its T is comparable; ours is any
// runtime.Object + metav1.Object, which Go cannot compare. (indexer and deltafifo
// have the same check for the same reason.)
func isNil(obj any) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
