package indexer

// DeletedFinalStateUnknown is the tombstone for an object whose deletion this client
// did not see as a watch event, but inferred because a relist no longer contained it.
// Obj is the last state this client knew; it may be stale (the object may have changed
// before it was deleted).
//
// Why it is its own type: in client-go the tombstone travels through the same
// interface{} as the object, so a delete handler that writes obj.(*v1.Pod) panics on
// the rare delete seen only by a relist (user pain point 9). Here the tombstone is a
// distinct generic type that is never a T: a handler receives it in its own typed
// field, DeletedObject.FinalStateUnknown (package informer), beside the object, so it
// cannot be mistaken for the object.
//
// client-go: tools/cache/delta_fifo.go DeletedFinalStateUnknown
type DeletedFinalStateUnknown[T any] struct {
	// Key is the object's key (namespace/name) as the queue computed it.
	Key string
	// Obj is the last known state of the object.
	Obj T
}
