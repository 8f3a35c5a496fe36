package workqueue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParallelizeUntilRunsEveryPieceOnce(t *testing.T) {
	tests := []struct{ workers, pieces, chunk int }{
		{workers: 1, pieces: 1, chunk: 0},
		{workers: 4, pieces: 1000, chunk: 0},
		{workers: 4, pieces: 1000, chunk: 7},
		{workers: 10, pieces: 3, chunk: 0},
		{workers: 3, pieces: 10, chunk: 100},
		{workers: 16, pieces: 999, chunk: 10},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%d workers, %d pieces, chunks of %d: every piece runs once on at most min(workers, chunks) goroutines",
			tt.workers, tt.pieces, tt.chunk)
		t.Run(name, func(t *testing.T) {
			calls := make([]atomic.Int32, tt.pieces)
			var running, peak atomic.Int32
			err := ParallelizeUntil(t.Context(), tt.workers, tt.pieces, func(p int) {
				n := running.Add(1)
				for {
					old := peak.Load()
					if n <= old || peak.CompareAndSwap(old, n) {
						break
					}
				}
				calls[p].Add(1)
				running.Add(-1)
			}, ParallelizeOptions{ChunkSize: tt.chunk})
			require.NoError(t, err)
			for p := range calls {
				require.Equal(t, int32(1), calls[p].Load(), "piece %d", p)
			}
			chunkSize := max(tt.chunk, 1)
			chunks := (tt.pieces + chunkSize - 1) / chunkSize
			assert.LessOrEqual(t, int(peak.Load()), min(tt.workers, chunks))
		})
	}
}

func TestParallelizeUntilUsesAllWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Every piece waits on a barrier that opens only when 4 pieces are running, so
		// the call can only finish if 4 workers really run at once.
		var mu sync.Mutex
		arrived := 0
		open := make(chan struct{})
		err := ParallelizeUntil(t.Context(), 4, 8, func(int) {
			mu.Lock()
			arrived++
			if arrived == 4 {
				close(open)
			}
			mu.Unlock()
			<-open
		}, ParallelizeOptions{})
		require.NoError(t, err)
	})
}

func TestParallelizeUntilChunksAreConsecutive(t *testing.T) {
	// With one worker, chunking must not change the order: pieces run 0, 1, 2, …
	var got []int
	err := ParallelizeUntil(t.Context(), 1, 25, func(p int) { got = append(got, p) }, ParallelizeOptions{ChunkSize: 4})
	require.NoError(t, err)
	for i, p := range got {
		require.Equal(t, i, p)
	}
	assert.Len(t, got, 25)
}

func TestParallelizeUntilStopsWhenTheContextEnds(t *testing.T) {
	t.Run("with one worker, no piece runs after the one that cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(t.Context())
		defer cancel(nil)
		stop := errors.New("enough")
		var ran atomic.Int32
		err := ParallelizeUntil(ctx, 1, 1000, func(p int) {
			ran.Add(1)
			if p == 9 {
				cancel(stop)
			}
		}, ParallelizeOptions{ChunkSize: 7})
		require.ErrorIs(t, err, stop, "the error carries the context's cause")
		assert.Equal(t, int32(10), ran.Load())
		assert.Contains(t, err.Error(), "after 10 of 1000 pieces")
	})
	t.Run("with many workers, each finishes at most the piece it had started", func(t *testing.T) {
		const workers = 4
		ctx, cancel := context.WithCancelCause(t.Context())
		defer cancel(nil)
		stop := errors.New("enough")
		cancelled := make(chan struct{})
		var ran, startedAfter atomic.Int32
		err := ParallelizeUntil(ctx, workers, 1000, func(p int) {
			select {
			case <-cancelled:
				startedAfter.Add(1)
			default:
			}
			ran.Add(1)
			switch {
			case p == 9:
				cancel(stop)
				close(cancelled)
			case p > 9:
				<-cancelled // later pieces cannot finish before the cancel
			}
		}, ParallelizeOptions{})
		require.ErrorIs(t, err, stop)
		assert.LessOrEqual(t, startedAfter.Load(), int32(workers-1),
			"only a worker that had already checked the context may start one more piece")
		assert.LessOrEqual(t, ran.Load(), int32(10+2*(workers-1)))
	})
	t.Run("a worker starts nothing once the context has ended", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		ran := 0
		p := parallelRun{ctx: ctx, pieces: 10, chunks: 10, chunkSize: 1, work: func(int) { ran++ }}
		p.worker()
		assert.Zero(t, ran)
	})
}

func TestParallelizeUntilReturnsNilWhenEverythingRanBeforeTheContextEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var ran atomic.Int32
	err := ParallelizeUntil(ctx, 1, 5, func(p int) {
		ran.Add(1)
		if p == 4 {
			cancel() // the last piece: nothing is left to skip
		}
	}, ParallelizeOptions{})
	assert.NoError(t, err)
	assert.Equal(t, int32(5), ran.Load())
}

func TestParallelizeUntilRepanicsInTheCaller(t *testing.T) {
	boom := errors.New("boom")
	var ran atomic.Int32
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		_ = ParallelizeUntil(t.Context(), 1, 100, func(p int) {
			ran.Add(1)
			if p == 3 {
				panic(boom)
			}
		}, ParallelizeOptions{})
	}()
	pe, ok := recovered.(*PanicError)
	require.True(t, ok, "want a *PanicError, got %T", recovered)
	assert.Equal(t, 3, pe.Piece)
	assert.ErrorIs(t, pe, boom)
	assert.Contains(t, string(pe.Stack), "parallelizer_test.go")
	assert.Equal(t, int32(4), ran.Load(), "no piece may start after the panic")
}

func TestParallelizeUntilStopsOtherWorkersAfterAPanic(t *testing.T) {
	// Which pieces the other workers manage to start between a panic and its recording
	// depends on scheduling; what must hold is that a worker takes no piece once a panic
	// is recorded.
	ran := 0
	p := parallelRun{ctx: t.Context(), pieces: 10, chunks: 10, chunkSize: 1, work: func(int) { ran++ }}
	p.panicked.Store(&PanicError{Piece: 3, Value: "boom"})
	p.worker()
	assert.Zero(t, ran)
}

func TestParallelizeUntilRejectsBadInput(t *testing.T) {
	noop := func(int) {}
	tests := []struct {
		name string
		call func() error
	}{
		{"zero workers are rejected", func() error { return ParallelizeUntil(t.Context(), 0, 1, noop, ParallelizeOptions{}) }},
		{"a negative piece count is rejected", func() error { return ParallelizeUntil(t.Context(), 1, -1, noop, ParallelizeOptions{}) }},
		{"a negative chunk size is rejected", func() error {
			return ParallelizeUntil(t.Context(), 1, 1, noop, ParallelizeOptions{ChunkSize: -1})
		}},
		{"a nil function is rejected", func() error { return ParallelizeUntil(t.Context(), 1, 1, nil, ParallelizeOptions{}) }},
		{"a nil context is rejected", func() error {
			//lint:ignore SA1012 the nil context is the bad input under test
			return ParallelizeUntil(nil, 1, 1, noop, ParallelizeOptions{})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, tt.call(), ErrInvalidArgument)
		})
	}
	t.Run("zero pieces run nothing and succeed", func(t *testing.T) {
		called := false
		require.NoError(t, ParallelizeUntil(t.Context(), 4, 0, func(int) { called = true }, ParallelizeOptions{}))
		assert.False(t, called)
	})
}
