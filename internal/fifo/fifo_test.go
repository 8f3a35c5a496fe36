package fifo

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQueueMatchesSlice(t *testing.T) {
	for seed := range uint64(10) {
		for _, pooled := range []bool{false, true} {
			t.Run(fmt.Sprintf("the queue pops what a slice FIFO pops (seed %d, pool %v)", seed, pooled), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 0x5eed))
				var q Queue[int]
				if pooled {
					q.Pool = new(Pool[int])
				}
				var model []int
				next := 0
				for step := range 20000 {
					// Phases of mostly-push and mostly-pop make the queue grow over many
					// blocks, empty out and grow again.
					pushBias := 30 + 40*((step/2000)%2)
					if len(model) == 0 || r.IntN(100) < pushBias {
						q.Push(next)
						model = append(model, next)
						next++
					} else {
						require.Equal(t, model[0], q.Pop(), "step %d", step)
						model = model[1:]
					}
					require.Equal(t, len(model), q.Len(), "step %d", step)
					if step%500 == 0 {
						require.Equal(t, model, slices.Collect(q.All()), "All, step %d", step)
					}
				}
			})
		}
	}
	t.Run("All stops when asked", func(t *testing.T) {
		var q Queue[int]
		for i := range 3 * BlockLen {
			q.Push(i)
		}
		var seen []int
		for v := range q.All() {
			if v == BlockLen+1 {
				break
			}
			seen = append(seen, v)
		}
		assert.Len(t, seen, BlockLen+1)
	})
}

func TestQueueMemory(t *testing.T) {
	t.Run("a drained queue keeps one block and a spare, without a pool", func(t *testing.T) {
		var q Queue[int]
		for i := range 100_000 {
			q.Push(i)
		}
		require.GreaterOrEqual(t, q.Cap(), 100_000)
		for range 100_000 {
			q.Pop()
		}
		assert.Equal(t, 2*BlockLen, q.Cap())
	})
	t.Run("a drained queue keeps one block, with a pool", func(t *testing.T) {
		q := Queue[int]{Pool: new(Pool[int])}
		for i := range 100_000 {
			q.Push(i)
		}
		for range 100_000 {
			q.Pop()
		}
		assert.Equal(t, BlockLen, q.Cap())
	})
	t.Run("a popped slot no longer references its item", func(t *testing.T) {
		var q Queue[*int]
		x := 1
		for range BlockLen + 5 {
			q.Push(&x)
		}
		for range BlockLen + 5 {
			q.Pop()
		}
		for _, b := range []*block[*int]{q.head, q.spare} {
			for _, p := range b.items {
				assert.Nil(t, p)
			}
		}
	})
	t.Run("blocks given back to a pool are empty and unlinked", func(t *testing.T) {
		x := 1
		pool := new(Pool[*int])
		q := Queue[*int]{Pool: pool}
		for range 20 * BlockLen {
			q.Push(&x)
		}
		for range 20 * BlockLen {
			q.Pop()
		}
		for range 20 {
			b := pool.get()
			assert.Nil(t, b.next)
			for _, p := range b.items {
				require.Nil(t, p)
			}
		}
	})
	t.Run("alternating push and pop at any depth allocates nothing after one cycle", func(t *testing.T) {
		for depth := 1; depth <= 3*BlockLen+2; depth++ {
			for _, pushFirst := range []bool{true, false} {
				var q Queue[int]
				for i := range depth {
					q.Push(i)
				}
				allocs := testing.AllocsPerRun(10, func() {
					if pushFirst {
						q.Push(1)
						q.Pop()
					} else {
						q.Pop()
						q.Push(1)
					}
				})
				require.Zero(t, allocs, "depth %d, push first %v", depth, pushFirst)
			}
		}
	})
	t.Run("a steady backlog allocates nothing: read blocks are reused", func(t *testing.T) {
		var q Queue[int]
		for i := range 10 * BlockLen {
			q.Push(i)
		}
		allocs := testing.AllocsPerRun(10, func() {
			for range 3 * BlockLen {
				q.Push(1)
				q.Pop()
			}
		})
		assert.Zero(t, allocs)
	})
}

// Two queues sharing a Pool, each in turn buffering a burst of 100 blocks and
// draining it (two handlers of one informer, a resync each): after the first round the
// bursts are held in the blocks the other queue gave back. Without a pool every burst
// allocates its blocks. (Under the race detector sync.Pool drops a quarter of what it
// is given on purpose, which the bound allows for.)
func TestPoolSharesBlocksBetweenQueues(t *testing.T) {
	const blocks = 100
	burst := func(q *Queue[int]) {
		for i := range blocks * BlockLen {
			q.Push(i)
		}
		for range blocks * BlockLen {
			q.Pop()
		}
	}
	allocsPerRound := func(pool *Pool[int]) float64 {
		a, b := Queue[int]{Pool: pool}, Queue[int]{Pool: pool}
		return testing.AllocsPerRun(5, func() {
			burst(&a)
			burst(&b)
		})
	}
	without := allocsPerRound(nil)
	with := allocsPerRound(new(Pool[int]))
	require.GreaterOrEqual(t, without, float64(2*blocks-4), "without a pool, each burst allocates its blocks")
	assert.Less(t, with, float64(blocks), "with a shared pool, bursts reuse the blocks given back")
}
