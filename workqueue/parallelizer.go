package workqueue

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// ParallelizeOptions configures ParallelizeUntil. The zero value hands out pieces one
// at a time.
type ParallelizeOptions struct {
	// ChunkSize is how many consecutive pieces a worker takes at once; 0 means 1.
	// Larger chunks help when there are far more pieces than workers and each piece is
	// cheap: workers then contend for the next chunk less often.
	ChunkSize int
}

// PanicError is the value ParallelizeUntil panics with, in the caller's goroutine, when
// doWorkPiece panicked in a worker.
type PanicError struct {
	// Piece is the piece whose call panicked.
	Piece int
	// Value is what doWorkPiece panicked with.
	Value any
	// Stack is the worker's stack at the panic.
	Stack []byte
}

// Error describes the panic and includes the worker's stack.
func (e *PanicError) Error() string {
	return fmt.Sprintf("workqueue: ParallelizeUntil piece %d panicked: %v\n\n%s", e.Piece, e.Value, e.Stack)
}

// Unwrap returns the panic value if it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// ParallelizeUntil calls doWorkPiece(p) for every p in [0, pieces), on at most workers
// goroutines, and returns when all calls have returned. Pieces are handed out in chunks
// of opts.ChunkSize consecutive pieces; min(workers, number of chunks) goroutines run.
//
// When ctx ends, workers start no new piece; ParallelizeUntil then returns an error
// wrapping context.Cause(ctx) if some pieces never ran, and nil if all of them did.
// Bad input (workers < 1, pieces < 0, ChunkSize < 0, a nil ctx or func) returns an
// error wrapping ErrInvalidArgument before any piece runs.
//
// If doWorkPiece panics, the other workers stop taking pieces, and once they have
// returned ParallelizeUntil panics in the caller's goroutine with a *PanicError.
//
// Differences from client-go: client-go returns nothing, so a caller cannot tell a
// cancelled run from a complete one; it fills a channel with one entry per chunk up
// front (we hand out chunks with an atomic counter); it panics on a negative piece
// count and does nothing for zero workers; and a panic in a piece crashes the process
// from the worker goroutine, where the caller cannot recover it.
//
// client-go: util/workqueue/parallelizer.go ParallelizeUntil
func ParallelizeUntil(ctx context.Context, workers, pieces int, doWorkPiece func(piece int), opts ParallelizeOptions) error {
	switch {
	case ctx == nil:
		return fmt.Errorf("%w: ParallelizeUntil needs a non-nil context", ErrInvalidArgument)
	case doWorkPiece == nil:
		return fmt.Errorf("%w: ParallelizeUntil needs a work function", ErrInvalidArgument)
	case workers < 1:
		return fmt.Errorf("%w: ParallelizeUntil needs at least one worker, got %d", ErrInvalidArgument, workers)
	case pieces < 0:
		return fmt.Errorf("%w: ParallelizeUntil piece count %d is negative", ErrInvalidArgument, pieces)
	case opts.ChunkSize < 0:
		return fmt.Errorf("%w: ParallelizeUntil chunk size %d is negative", ErrInvalidArgument, opts.ChunkSize)
	}
	if pieces == 0 {
		return nil
	}
	chunkSize := max(opts.ChunkSize, 1)
	chunks := (pieces + chunkSize - 1) / chunkSize // ceil(pieces / chunkSize)

	p := parallelRun{ctx: ctx, pieces: pieces, chunks: chunks, chunkSize: chunkSize, work: doWorkPiece}
	var wg sync.WaitGroup
	for range min(workers, chunks) {
		// Goroutine owner: this call. Each worker returns when the chunks run out, ctx
		// ends or a piece panics; ParallelizeUntil waits for all of them below.
		wg.Go(p.worker)
	}
	wg.Wait()

	if pe := p.panicked.Load(); pe != nil {
		panic(pe)
	}
	if done := p.done.Load(); done < int64(pieces) {
		if ctx.Err() == nil { // Not cancelled, not panicked: a piece ended its goroutine.
			return fmt.Errorf("workqueue: ParallelizeUntil stopped after %d of %d pieces: a piece called runtime.Goexit",
				done, pieces)
		}
		return fmt.Errorf("workqueue: ParallelizeUntil stopped after %d of %d pieces: %w",
			done, pieces, context.Cause(ctx))
	}
	return nil
}

// parallelRun is the state one ParallelizeUntil call shares with its workers.
type parallelRun struct {
	// ctx, pieces, chunks, chunkSize and work are immutable.
	ctx                       context.Context
	pieces, chunks, chunkSize int
	work                      func(piece int)

	// next is the index of the next chunk to hand out.
	next atomic.Int64
	// done counts the pieces whose call returned. Workers add to it once per chunk.
	// Why not once per piece: every worker writing one shared counter per piece makes
	// the counter's cache line bounce between cores, which costs more than cheap pieces.
	done atomic.Int64
	// panicked holds the first panic; once set, workers stop taking pieces.
	panicked atomic.Pointer[PanicError]
}

// worker takes chunks until none are left, ctx ends or some piece has panicked. A panic
// ends this worker: it is recorded (the first one wins) rather than crashing the
// process from this goroutine.
func (p *parallelRun) worker() {
	stop := p.ctx.Done() // Why a channel: ctx.Err() takes a lock on every call.
	piece := -1
	defer func() {
		if r := recover(); r != nil {
			p.panicked.CompareAndSwap(nil, &PanicError{Piece: piece, Value: r, Stack: debug.Stack()})
		}
	}()
	for {
		chunk := int(p.next.Add(1) - 1)
		if chunk >= p.chunks {
			return
		}
		start := chunk * p.chunkSize
		end := min(start+p.chunkSize, p.pieces)
		for piece = start; piece < end; piece++ {
			select {
			case <-stop:
				p.done.Add(int64(piece - start))
				return
			default:
			}
			if p.panicked.Load() != nil {
				p.done.Add(int64(piece - start))
				return
			}
			p.work(piece)
		}
		p.done.Add(int64(end - start))
	}
}
