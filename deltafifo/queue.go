package deltafifo

import (
	"context"
	"errors"
	"reflect"

	"github.com/kubeinternals/informers/indexer"
)

// ErrClosed is wrapped by the error Pop and PopBatch return once the queue has been
// closed and everything queued before has been popped.
//
// client-go: tools/cache/fifo.go ErrFIFOClosed
var ErrClosed = errors.New("queue is closed")

// ErrKey is wrapped by the error returned when the key function cannot compute an
// object's key (for example indexer.ErrNilObject for a nil object).
var ErrKey = errors.New("cannot compute object key")

// ErrTransform is wrapped by the error returned when the Transform option fails or
// returns a nil object.
var ErrTransform = errors.New("transform failed")

// PopProcessFunc handles the deltas of one popped key. isInInitialList is true while
// the queue is still delivering the first list (see Queue.HasSynced), so a handler
// can tell "this object existed when I started" from "this object was just created".
//
// client-go: tools/cache/fifo.go PopProcessFunc
type PopProcessFunc[T any] func(deltas Deltas[T], isInInitialList bool) error

// PopBatchFunc handles a batch of deltas, in queue order. Within one batch no two
// deltas have the same key, so the consumer may apply them in any grouping it likes
// (one store transaction, say) without reordering one object's history.
//
// client-go: tools/cache/controller.go ProcessBatchFunc
type PopBatchFunc[T any] func(batch []Delta[T], isInInitialList bool) error

// Queue is what the informer consumes. The reflector writes into it (Add, Update,
// Delete, Replace, Resync, Bookmark) and one consumer goroutine drains it with Pop.
// DeltaFIFO and RealFIFO both satisfy it.
//
// client-go: tools/cache/fifo.go Queue
type Queue[T indexer.Object] interface {
	Add(obj T) error
	Update(obj T) error
	Delete(obj T) error
	// Replace delivers a full list (the first LIST or a relist) at resourceVersion.
	Replace(items []T, resourceVersion string) error
	// Resync asks for every object the consumer already has to be re-delivered.
	Resync() error
	// Bookmark passes a watch bookmark on. DeltaFIFO ignores it.
	Bookmark(resourceVersion string) error
	// Pop blocks until something is queued, removes it and hands it to process.
	// It returns process's error; ctx.Err() if ctx ends first; and an error wrapping
	// ErrClosed once the queue is closed and empty.
	Pop(ctx context.Context, process PopProcessFunc[T]) error
	// HasSynced reports whether the first list has been popped and processed, or
	// whether an Add, Update or Delete came before any Replace.
	HasSynced() bool
	// Synced is closed, exactly once, when HasSynced becomes true.
	Synced() <-chan struct{}
	// Close makes Pop return ErrClosed once the queue is empty. It is idempotent.
	Close()
}

// BatchQueue is a Queue that can hand over many deltas per Pop. RealFIFO implements it.
//
// client-go: tools/cache/fifo.go QueueWithBatch
type BatchQueue[T indexer.Object] interface {
	Queue[T]
	// PopBatch is Pop for up to a batch of deltas with distinct keys.
	PopBatch(ctx context.Context, process PopBatchFunc[T]) error
}

// KnownObjects is the consumer's view of what it already has — in an informer, the
// indexer. DeltaFIFO reads it to infer deletes on Replace, to decide whether a
// Delete is news, and to find what to resync. indexer.Indexer satisfies it.
//
// Invariant: it must be keyed by the same key function as the queue.
//
// client-go: tools/cache/delta_fifo.go KeyListerGetter
type KnownObjects[T any] interface {
	ListKeys() []string
	GetByKey(key string) (item T, exists bool, err error)
}

// Compile-time proof that both queues are Queues.
var (
	_ Queue[indexer.Object]      = (*DeltaFIFO[indexer.Object])(nil)
	_ BatchQueue[indexer.Object] = (*RealFIFO[indexer.Object])(nil)
)

// isNil reports whether obj is a nil interface or holds a nil pointer.
//
// Why reflect: T is usually a pointer type and a nil *v1.Pod is not == nil once it
// is inside an interface. reflect.ValueOf on a pointer does not allocate.
func isNil(obj any) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
