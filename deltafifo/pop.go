package deltafifo

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// ctxWaiter lets a Pop that waits on a sync.Cond also wake up when its ctx ends.
//
// Why: sync.Cond cannot select on a channel, and a goroutine per Pop that waits on
// ctx.Done() would leak whenever Pop returns for another reason. context.AfterFunc
// registers a callback instead of starting a goroutine; the runtime starts one only
// if ctx actually ends, and stop() deregisters it otherwise, so nothing is left
// behind either way.
//
// Pitfall: the callback must take the cond's lock before it broadcasts. Pop checks
// ctx.Err() and then calls Wait under that lock, so a broadcast sent without the
// lock could land between the check and the Wait and be lost.
type ctxWaiter struct {
	// stop deregisters the callback; nil until the first wait. Only the Pop that
	// owns this ctxWaiter (a local variable) touches it.
	stop func() bool
}

// waitLocked blocks on cond until someone broadcasts or ctx ends. cond.L must be
// held; as with cond.Wait, the caller re-checks its condition in a loop.
func (w *ctxWaiter) waitLocked(ctx context.Context, cond *sync.Cond) {
	if w.stop == nil && ctx.Done() != nil {
		// Owner: the context package, which runs this in a new goroutine only if ctx
		// ends before release is called. It exits after one broadcast.
		w.stop = context.AfterFunc(ctx, func() {
			cond.L.Lock()
			cond.Broadcast()
			cond.L.Unlock()
		})
	}
	cond.Wait()
}

// release deregisters the ctx callback. Call it as soon as the waiting is over, so
// that a ctx cancelled later, while an item is being processed, starts nothing.
func (w *ctxWaiter) release() {
	if w.stop != nil {
		w.stop()
		w.stop = nil
	}
}

// Slow-consumer reporting. A handler that blocks Pop backs the queue up, which
// backs the reflector up, which backs the watch stream up inside the apiserver
// connection — memory that looks like a leak in the watch decoder (pain point 2,
// kubernetes/kubernetes#103789). Pop therefore warns when one process call took
// longer than slowProcessThreshold while more than slowProcessDepth items waited.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFO.Pop (the utiltrace block)
const (
	slowProcessDepth     = 10
	slowProcessThreshold = 100 * time.Millisecond
)

// slowWatch times one process call, but only when the queue is deep enough for a
// slow call to matter, so that a shallow queue pays no clock reads.
type slowWatch struct {
	start time.Time // zero when not timing
	depth int
}

func startSlowWatch(depth int) slowWatch {
	if depth <= slowProcessDepth {
		return slowWatch{}
	}
	return slowWatch{start: time.Now(), depth: depth}
}

// report logs a warning if the timed call was slow. count is the number of deltas
// the call processed; a batch is allowed slowProcessThreshold per delta, at most 1s.
func (w slowWatch) report(logger *slog.Logger, key string, count int) {
	if w.start.IsZero() {
		return
	}
	limit := min(slowProcessThreshold*time.Duration(max(count, 1)), time.Second)
	if took := time.Since(w.start); took > limit {
		logger.Warn("slow event handlers are blocking the queue",
			"key", key, "depth", w.depth, "deltas", count, "took", took)
	}
}
