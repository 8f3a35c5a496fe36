package deltafifo

import (
	"context"
	"fmt"
)

// Pop waits until a key is queued, removes it with all its deltas, and calls process
// with them — with the queue's lock held. It returns process's error; the deltas are
// not re-queued (there is no requeue, as in client-go 1.37).
//
// Pop returns ctx.Err() if ctx is done before a key is taken (also when ctx is
// already done on entry, even if keys are queued), and an error wrapping ErrClosed
// once Close was called and the queue is empty. Keys queued before Close are still
// handed out.
//
// isInInitialList is true until the queue has synced (see HasSynced); it is computed
// before this key is counted.
//
// Why process runs under the lock: the consumer updates KnownObjects (the indexer)
// in process, and Replace, Resync and Delete read KnownObjects under the same lock.
// Were the lock released, a Replace could run between the pop and the indexer
// update, see the object in neither place, and miss a delete.
//
// Pitfall: so process must be quick and must not call the queue (it would
// deadlock). Hand work to a workqueue instead.
//
// Differences from client-go: the initial-list count is decremented before process,
// as in client-go, but Synced is closed (and HasSynced turns true) only after
// process returns. client-go closes its Done channel before processing the last
// initial item; a waiter woken by it could read a cache still missing that item.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFO.Pop
func (f *DeltaFIFO[T]) Pop(ctx context.Context, process PopProcessFunc[T]) error {
	if process == nil {
		return fmt.Errorf("%s: Pop: process func is nil", f.name)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.waitForKeyLocked(ctx); err != nil {
		return err
	}

	isInInitialList := !f.sync.syncedLocked()
	key := f.queue[0]
	f.queue[0] = "" // let the key string be collected
	f.queue = f.queue[1:]
	deltas := f.items[key]
	delete(f.items, key)
	setLengthLocked(f.queued, len(f.queue))
	f.sync.poppedLocked(1)
	if f.tracer != nil {
		f.tracePoppedLocked(key, deltas)
	}
	// Runs before the deferred Unlock, so also if process panics.
	defer f.sync.checkLocked()

	watch := startSlowWatch(len(f.queue))
	err := process(deltas, isInInitialList)
	watch.report(f.logger, key, len(deltas))
	return err
}

// waitForKeyLocked blocks until a key is queued, ctx is done, or the queue is closed
// and empty.
func (f *DeltaFIFO[T]) waitForKeyLocked(ctx context.Context) error {
	var w ctxWaiter
	defer w.release()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(f.queue) > 0 {
			return nil
		}
		if f.closed {
			return fmt.Errorf("%s: %w", f.name, ErrClosed)
		}
		w.waitLocked(ctx, &f.cond)
	}
}

// HasSynced reports whether the first list has been delivered: the keys queued by
// the first Replace have all been popped and processed — or an Add, Update or
// Delete came before any Replace. It never turns false again. It takes no lock.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFO.HasSynced
func (f *DeltaFIFO[T]) HasSynced() bool { return f.sync.hasSynced() }

// Len is the number of keys with pending deltas: what an informer's queued-items
// metric reports. It takes the lock, so a Pop's process must not call it.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFO (len(f.items), the numberOfQueuedItem metric)
func (f *DeltaFIFO[T]) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queue)
}

// Synced returns a channel that is closed when HasSynced becomes true, so a caller
// can wait for the initial list without polling.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFO.Done
func (f *DeltaFIFO[T]) Synced() <-chan struct{} { return f.sync.done }

// Bookmark does nothing: a DeltaFIFO has no delta for a bookmark. It exists so that
// DeltaFIFO satisfies Queue; the reflector records a bookmark's resource version
// itself either way.
func (f *DeltaFIFO[T]) Bookmark(string) error { return nil }

// Close wakes every waiting Pop; from now on Pop returns ErrClosed once the queue is
// empty. Adds after Close are still accepted. Calling Close again does nothing.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFO.Close
func (f *DeltaFIFO[T]) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.cond.Broadcast()
}
