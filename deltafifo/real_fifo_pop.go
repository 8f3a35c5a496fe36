package deltafifo

import (
	"context"
	"fmt"
)

// Pop waits for the oldest delta, removes it and calls process with it (as a Deltas
// of length one). It returns process's error, ctx.Err() if ctx is done before a
// delta is taken, or an error wrapping ErrClosed once the queue is closed and empty.
//
// process runs without the queue's lock while fewer than two batches are queued, so
// the reflector can keep queueing during a slow handler; once the queue is that
// deep, the lock is held and the reflector waits while a handler runs
// (backpressure). Either way only one process call runs at a time.
//
// The initial-list count is decremented after process returns, so HasSynced turns
// true only once the consumer has applied the first list.
//
// Differences from client-go: a second concurrent Pop waits for the running process
// call; client-go requires a single consumer goroutine and, with the lock released,
// would run two process calls at once.
//
// client-go: tools/cache/the_real_fifo.go RealFIFO.Pop
func (f *RealFIFO[T]) Pop(ctx context.Context, process PopProcessFunc[T]) error {
	if process == nil {
		return fmt.Errorf("%s: Pop: process func is nil", f.name)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.waitForItemLocked(ctx); err != nil {
		return err
	}
	isInInitialList := !f.sync.syncedLocked()
	e := f.items[0]
	if f.tracer != nil {
		f.tracePoppedLocked(e.key, e.delta, 1)
	}
	f.items[0] = entry[T]{} // the array outlives the pop; let the object be collected
	f.items = f.items[1:]
	setLengthLocked(f.queued, len(f.items))
	return f.processLocked(e.label(), 1, func() error {
		return process(Deltas[T]{e.delta}, isInInitialList)
	})
}

// PopBatch is Pop for several deltas at once: it hands process up to 1000 deltas
// from the head of the queue, in order, with distinct keys. The batch ends before
//   - a second delta for a key already in the batch (so one object's history is
//     never reordered or merged),
//   - a ReplacedAll, SyncAll or Bookmark (these are popped alone, as a batch of one),
//   - the end of the initial list (so isInInitialList is right for every delta).
//
// Simplified: client-go takes two functions, one for a batch and one for a single
// delta, and requires them to do the same thing; here one function gets a batch of
// length one instead. A key error cannot end a batch here, because keys are computed
// when deltas are queued. client-go also ends a batch explicitly where its
// initial-list count runs out; here that rule is implied by the previous one: an
// Add, Update or Delete before the first Replace leaves nothing to wait for, so the
// initial list only ever holds whole-list deltas, which are popped alone.
//
// client-go: tools/cache/the_real_fifo.go RealFIFO.PopBatch
func (f *RealFIFO[T]) PopBatch(ctx context.Context, process PopBatchFunc[T]) error {
	if process == nil {
		return fmt.Errorf("%s: PopBatch: process func is nil", f.name)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.waitForItemLocked(ctx); err != nil {
		return err
	}
	isInInitialList := !f.sync.syncedLocked()
	n := f.batchLenLocked()
	label := f.items[0].label()
	batch := make([]Delta[T], n)
	for i := range n {
		batch[i] = f.items[i].delta
		if f.tracer != nil {
			f.tracePoppedLocked(f.items[i].key, batch[i], n)
		}
		f.items[i] = entry[T]{}
	}
	f.items = f.items[n:]
	setLengthLocked(f.queued, len(f.items))
	return f.processLocked(label, n, func() error {
		return process(batch, isInInitialList)
	})
}

// batchable reports whether a delta of type t may share a batch: the per-object
// types may, the whole-list types may not.
//
// client-go: tools/cache/the_real_fifo.go batchable
func batchable(t DeltaType) bool {
	switch t {
	case Added, Updated, Deleted, Replaced, Sync:
		return true
	}
	return false
}

// batchLenLocked returns how many deltas from the head of the queue form the next
// batch. The queue is not empty.
func (f *RealFIFO[T]) batchLenLocked() int {
	n := 0
	for i := range min(len(f.items), f.batchSize) {
		e := &f.items[i]
		if !batchable(e.delta.Type) {
			if i == 0 {
				n = 1
			}
			break
		}
		if _, dup := f.seen[e.key]; dup {
			break
		}
		f.seen[e.key] = struct{}{}
		n++
	}
	for i := range n {
		delete(f.seen, f.items[i].key)
	}
	return n
}

// waitForItemLocked blocks until a delta is queued and no other process call is
// running, ctx is done, or the queue is closed and empty.
func (f *RealFIFO[T]) waitForItemLocked(ctx context.Context) error {
	var w ctxWaiter
	defer w.release()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(f.items) > 0 && !f.processing {
			return nil
		}
		if f.closed && len(f.items) == 0 {
			return fmt.Errorf("%s: %w", f.name, ErrClosed)
		}
		w.waitLocked(ctx, &f.cond)
	}
}

// processLocked runs fn, which processes n popped deltas, and then counts them off
// the initial list. mu is held on entry and on return (also if fn panics); it is
// released around fn while fewer than two batches are queued.
//
// client-go: tools/cache/the_real_fifo.go RealFIFO.whileProcessing_locked
func (f *RealFIFO[T]) processLocked(label string, n int, fn func() error) error {
	watch := startSlowWatch(len(f.items))
	// Runs last, with mu held: the initial list counts as delivered only once fn has
	// applied it.
	defer func() {
		f.sync.poppedLocked(n)
		f.sync.checkLocked()
	}()
	if len(f.items) < 2*f.batchSize {
		f.processing = true
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			f.processing = false
			f.cond.Broadcast() // a Pop may be waiting for this call to finish
		}()
	}
	err := fn()
	watch.report(f.logger, label, n)
	return err
}

// label names an entry in logs: its key, or its type for a whole-list delta.
func (e *entry[T]) label() string {
	if e.key != "" {
		return e.key
	}
	return e.delta.Type.String()
}
