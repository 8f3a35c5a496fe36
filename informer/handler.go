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
// Differences from client-go: this is client-go 1.37's TypedResourceEventHandler[T],
// without the prefix (every handler here is typed). client-go's untyped
// ResourceEventHandler, whose OnDelete gets an interface{} that may be a
// DeletedFinalStateUnknown, has no counterpart.
//
// client-go: tools/cache/controller.go TypedResourceEventHandler
type ResourceEventHandler[T indexer.Object] interface {
	// OnAdd is called for an object the handler has not seen. isInInitialList is
	// true while the informer delivers its first list (and for the replay a late
	// registration receives), false for objects created later.
	OnAdd(obj T, isInInitialList bool)
	// OnUpdate is called when an object changed — or, with oldObj and newObj having
	// the same resourceVersion, for a periodic resync or a relist that found it
	// unchanged.
	OnUpdate(oldObj, newObj T)
	// OnDelete is called when an object was deleted. obj.OptionalObj is its final
	// state as the informer knew it, never nil. obj.FinalStateUnknown is non-nil when
	// the deletion was inferred by a relist rather than seen as a watch event:
	// OptionalObj is then the last state this client saw, which may be stale.
	// obj.GetKey() is the object's key either way.
	OnDelete(obj DeletedObject[T])
}

// HandlerFuncs adapts plain functions to ResourceEventHandler; nil funcs are skipped.
//
// Differences from client-go: this is client-go 1.37's
// TypedResourceEventHandlerDetailedFuncs[T]. client-go also has
// TypedResourceEventHandlerFuncs, whose AddFunc drops isInInitialList; one type that
// always passes it is enough (a func that does not need it ignores it).
//
// client-go: tools/cache/controller.go TypedResourceEventHandlerDetailedFuncs
type HandlerFuncs[T indexer.Object] struct {
	AddFunc    func(obj T, isInInitialList bool)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj DeletedObject[T])
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
func (h HandlerFuncs[T]) OnDelete(obj DeletedObject[T]) {
	if h.DeleteFunc != nil {
		h.DeleteFunc(obj)
	}
}

// FilteringHandler passes on only the notifications about objects that match
// FilterFunc, turning an update that crosses the filter's boundary into an add or a
// delete, so that the inner handler sees a consistent story about the objects it
// cares about:
//
//	old matches  new matches  →  inner handler gets
//	    yes          yes          OnUpdate(old, new)
//	    no           yes          OnAdd(new, false)
//	    yes          no           OnDelete(DeletedObject{OptionalObj: old})
//	    no           no           nothing
//
// The delete a crossing makes has no FinalStateUnknown: the informer saw the update.
//
// client-go: tools/cache/controller.go TypedFilteringResourceEventHandler
type FilteringHandler[T indexer.Object] struct {
	FilterFunc func(obj T) bool
	Handler    ResourceEventHandler[T]
}

// OnAdd passes the add on if obj matches.
func (f FilteringHandler[T]) OnAdd(obj T, isInInitialList bool) {
	if f.FilterFunc(obj) {
		f.Handler.OnAdd(obj, isInInitialList)
	}
}

// OnUpdate applies the transition table above.
func (f FilteringHandler[T]) OnUpdate(oldObj, newObj T) {
	oldMatch, newMatch := f.FilterFunc(oldObj), f.FilterFunc(newObj)
	switch {
	case oldMatch && newMatch:
		f.Handler.OnUpdate(oldObj, newObj)
	case newMatch:
		f.Handler.OnAdd(newObj, false)
	case oldMatch:
		f.Handler.OnDelete(DeletedObject[T]{OptionalObj: oldObj})
	}
}

// OnDelete passes the delete on if the object's last known state, OptionalObj,
// matches. The informer never delivers a nil OptionalObj; a FilterFunc called with one
// from a hand-built DeletedObject must cope with it (as client-go's FilterFunc must).
func (f FilteringHandler[T]) OnDelete(obj DeletedObject[T]) {
	if f.FilterFunc(obj.OptionalObj) {
		f.Handler.OnDelete(obj)
	}
}
