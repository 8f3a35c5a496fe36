package informer

import "github.com/kubeinternals/informers/indexer"

// ResourceEventHandler receives the notifications of one registration. Its methods
// are called by the registration's own goroutine, one at a time, in the order the
// informer saw the changes; they must not block for long (a slow handler only delays
// itself, but its backlog grows in memory — see Registration.Backlog).
//
// Pitfall: the objects are the informer's cached objects, shared with every other
// handler and with the Lister. Never modify them; DeepCopy first.
//
// client-go: tools/cache/controller.go ResourceEventHandler
type ResourceEventHandler[T indexer.Object] interface {
	// OnAdd is called for an object the handler has not seen. isInInitialList is
	// true while the informer delivers its first list (and for the replay a late
	// registration receives), false for objects created later.
	OnAdd(obj T, isInInitialList bool)
	// OnUpdate is called when an object changed — or, with oldObj and newObj having
	// the same resourceVersion, for a periodic resync or a relist that found it
	// unchanged.
	OnUpdate(oldObj, newObj T)
	// OnDelete is called when an object was deleted. obj is its final state as the
	// informer knew it. tombstone is non-nil when the deletion was inferred by a
	// relist rather than seen as a watch event: obj is then the last state this
	// client saw, which may be stale.
	OnDelete(obj T, tombstone *indexer.DeletedFinalStateUnknown[T])
}

// HandlerFuncs adapts plain functions to ResourceEventHandler; nil funcs are skipped.
//
// Differences from client-go: client-go has ResourceEventHandlerFuncs (which drops
// isInInitialList) and ResourceEventHandlerDetailedFuncs (which keeps it); one type
// that always passes it is enough.
//
// client-go: tools/cache/controller.go ResourceEventHandlerDetailedFuncs
type HandlerFuncs[T indexer.Object] struct {
	AddFunc    func(obj T, isInInitialList bool)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj T, tombstone *indexer.DeletedFinalStateUnknown[T])
}

// OnAdd calls AddFunc if it is set.
func (h HandlerFuncs[T]) OnAdd(obj T, isInInitialList bool) {
	if h.AddFunc != nil {
		h.AddFunc(obj, isInInitialList)
	}
}

// OnUpdate calls UpdateFunc if it is set.
func (h HandlerFuncs[T]) OnUpdate(oldObj, newObj T) {
	if h.UpdateFunc != nil {
		h.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc if it is set.
func (h HandlerFuncs[T]) OnDelete(obj T, tombstone *indexer.DeletedFinalStateUnknown[T]) {
	if h.DeleteFunc != nil {
		h.DeleteFunc(obj, tombstone)
	}
}

// FilteringHandler passes on only the notifications about objects that match Filter,
// turning an update that crosses the filter's boundary into an add or a delete, so
// that the inner handler sees a consistent story about the objects it cares about:
//
//	old matches  new matches  →  inner handler gets
//	    yes          yes          OnUpdate(old, new)
//	    no           yes          OnAdd(new, false)
//	    yes          no           OnDelete(old, nil)
//	    no           no           nothing
//
// client-go: tools/cache/controller.go FilteringResourceEventHandler
type FilteringHandler[T indexer.Object] struct {
	Filter  func(obj T) bool
	Handler ResourceEventHandler[T]
}

// OnAdd passes the add on if obj matches.
func (f FilteringHandler[T]) OnAdd(obj T, isInInitialList bool) {
	if f.Filter(obj) {
		f.Handler.OnAdd(obj, isInInitialList)
	}
}

// OnUpdate applies the transition table above.
func (f FilteringHandler[T]) OnUpdate(oldObj, newObj T) {
	oldMatch, newMatch := f.Filter(oldObj), f.Filter(newObj)
	switch {
	case oldMatch && newMatch:
		f.Handler.OnUpdate(oldObj, newObj)
	case newMatch:
		f.Handler.OnAdd(newObj, false)
	case oldMatch:
		f.Handler.OnDelete(oldObj, nil)
	}
}

// OnDelete passes the delete on if the object's last known state matches.
func (f FilteringHandler[T]) OnDelete(obj T, tombstone *indexer.DeletedFinalStateUnknown[T]) {
	if f.Filter(obj) {
		f.Handler.OnDelete(obj, tombstone)
	}
}
