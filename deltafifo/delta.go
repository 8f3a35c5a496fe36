package deltafifo

import (
	"strconv"

	"github.com/kubeinternals/informers/indexer"
)

// DeltaType says what happened to an object. The first five are per-object changes
// that both queues emit; the last three are whole-list notifications that only
// RealFIFO emits.
//
// client-go: tools/cache/delta_fifo.go DeltaType
type DeltaType uint8

// The delta types. The zero value is deliberately not a valid type, so a Delta that
// was never filled in prints as "DeltaType(0)" instead of passing for an Added.
const (
	// Added: a watch ADDED event (Reflector.Add).
	Added DeltaType = iota + 1
	// Updated: a watch MODIFIED event (Reflector.Update).
	Updated
	// Deleted: a watch DELETED event, or a delete inferred by Replace (then
	// Delta.Tombstone is set).
	Deleted
	// Replaced: the object was in a full LIST (the first list or a relist). It may or
	// may not have changed since the consumer last saw it.
	Replaced
	// Sync: a periodic resync re-delivers an object the consumer already has.
	Sync
	// ReplacedAll: RealFIFO's atomic form of Replace — one delta carrying the whole
	// list in Delta.Info.
	ReplacedAll
	// SyncAll: RealFIFO's atomic form of Resync — "re-deliver everything you have".
	SyncAll
	// Bookmark: RealFIFO passes a watch bookmark's resource version to the consumer
	// in Delta.Info, in order with the events around it.
	Bookmark
)

var deltaTypeNames = [...]string{
	Added:       "Added",
	Updated:     "Updated",
	Deleted:     "Deleted",
	Replaced:    "Replaced",
	Sync:        "Sync",
	ReplacedAll: "ReplacedAll",
	SyncAll:     "SyncAll",
	Bookmark:    "Bookmark",
}

// String returns the type's name as client-go spells it ("Added", "ReplacedAll", …).
func (t DeltaType) String() string {
	if t > 0 && int(t) < len(deltaTypeNames) {
		return deltaTypeNames[t]
	}
	return "DeltaType(" + strconv.Itoa(int(t)) + ")"
}

// Delta is one change to one object, or (for ReplacedAll, SyncAll and Bookmark) one
// whole-list notification.
//
// Which fields are set, by Type:
//
//	Added, Updated, Replaced, Sync  Object
//	Deleted                         Object (the last state the client saw); Tombstone too
//	                                when Replace inferred the delete
//	ReplacedAll                     Info.Objects and Info.ResourceVersion
//	SyncAll                         nothing
//	Bookmark                        Info.ResourceVersion
//
// Why Tombstone is a separate field: in client-go a tombstone travels in Object as a
// DeletedFinalStateUnknown, so every consumer must type-switch on it (pain point 9).
// Here Object is always a T — for an inferred delete it is the tombstone's Obj — and
// the tombstone only says "the final state is unknown".
//
// client-go: tools/cache/delta_fifo.go Delta
type Delta[T any] struct {
	Type DeltaType
	// Object is the object's state after the change; for Deleted, its last known
	// state. The zero T for ReplacedAll, SyncAll and Bookmark.
	Object T
	// Tombstone is non-nil only on a Deleted delta that Replace inferred because a
	// relist no longer contained the object. Then Tombstone.Obj == Object.
	Tombstone *indexer.DeletedFinalStateUnknown[T]
	// Info is set on ReplacedAll and Bookmark deltas, nil otherwise.
	Info *Info[T]
}

// Info is the payload of the whole-list deltas.
//
// client-go: tools/cache/the_real_fifo.go ReplacedAllInfo
// client-go: tools/cache/the_real_fifo.go BookmarkInfo
type Info[T any] struct {
	// Objects is the full list given to Replace, with the transform already applied
	// (ReplacedAll only).
	Objects []T
	// ResourceVersion is the list's or the bookmark's resource version.
	ResourceVersion string
}

// Deltas is what happened to one object while its key sat in the queue, oldest
// first and newest last.
//
// client-go: tools/cache/delta_fifo.go Deltas
type Deltas[T any] []Delta[T]

// Oldest returns the first delta, or nil if d is empty.
//
// client-go: tools/cache/delta_fifo.go Deltas.Oldest
func (d Deltas[T]) Oldest() *Delta[T] {
	if len(d) == 0 {
		return nil
	}
	return &d[0]
}

// Newest returns the last delta, or nil if d is empty. Its Object is the most
// recent state the queue saw.
//
// client-go: tools/cache/delta_fifo.go Deltas.Newest
func (d Deltas[T]) Newest() *Delta[T] {
	if len(d) == 0 {
		return nil
	}
	return &d[len(d)-1]
}

// isTombstone reports whether d is a delete inferred by Replace.
func (d *Delta[T]) isTombstone() bool { return d.Tombstone != nil }
