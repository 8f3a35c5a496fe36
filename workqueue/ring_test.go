package workqueue

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRingMatchesSlice(t *testing.T) {
	for seed := range uint64(10) {
		t.Run(fmt.Sprintf("the ring pops what a slice FIFO pops (seed %d)", seed), func(t *testing.T) {
			r := newRand(seed)
			var ring ring[int]
			var model []int
			next := 0
			for step := range 20000 {
				// Phases of mostly-push and mostly-pop make the ring grow, wrap and shrink.
				pushBias := 30 + 40*((step/2000)%2)
				if len(model) == 0 || r.IntN(100) < pushBias {
					ring.push(next)
					model = append(model, next)
					next++
				} else {
					require.Equal(t, model[0], ring.pop(), "step %d", step)
					model = model[1:]
				}
				require.Equal(t, len(model), ring.len(), "step %d", step)
			}
		})
	}
}

func TestRingMemory(t *testing.T) {
	t.Run("a drained ring gives back the space of a burst", func(t *testing.T) {
		var r ring[int]
		for i := range 100_000 {
			r.push(i)
		}
		require.GreaterOrEqual(t, len(r.buf), 100_000)
		for range 100_000 {
			r.pop()
		}
		assert.Less(t, len(r.buf), shrinkAbove)
	})
	t.Run("a popped slot no longer references its item", func(t *testing.T) {
		var r ring[*int]
		x := 1
		r.push(&x)
		r.pop()
		for _, p := range r.buf {
			assert.Nil(t, p)
		}
	})
	t.Run("alternating push and pop at any depth stops resizing after one cycle", func(t *testing.T) {
		for depth := 1; depth <= 1100; depth++ {
			for _, pushFirst := range []bool{true, false} {
				var r ring[int]
				for i := range depth {
					r.push(i)
				}
				allocs := testing.AllocsPerRun(10, func() {
					if pushFirst {
						r.push(1)
						r.pop()
					} else {
						r.pop()
						r.push(1)
					}
				})
				require.Zero(t, allocs, "depth %d, push first %v: the ring resizes back and forth", depth, pushFirst)
			}
		}
	})
}
