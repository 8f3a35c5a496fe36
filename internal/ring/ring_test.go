package ring

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRingMatchesSlice(t *testing.T) {
	for seed := range uint64(10) {
		t.Run(fmt.Sprintf("the ring pops what a slice FIFO pops (seed %d)", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 0x5eed))
			var ring Ring[int]
			var model []int
			next := 0
			for step := range 20000 {
				// Phases of mostly-push and mostly-pop make the ring grow, wrap and shrink.
				pushBias := 30 + 40*((step/2000)%2)
				if len(model) == 0 || r.IntN(100) < pushBias {
					ring.Push(next)
					model = append(model, next)
					next++
				} else {
					require.Equal(t, model[0], ring.Pop(), "step %d", step)
					model = model[1:]
				}
				require.Equal(t, len(model), ring.Len(), "step %d", step)
				if step%1000 == 0 {
					require.Equal(t, model, slices.Collect(ring.All()), "All, step %d", step)
				}
			}
		})
	}
}

func TestRingMemory(t *testing.T) {
	t.Run("a drained ring gives back the space of a burst", func(t *testing.T) {
		var r Ring[int]
		for i := range 100_000 {
			r.Push(i)
		}
		require.GreaterOrEqual(t, len(r.buf), 100_000)
		for range 100_000 {
			r.Pop()
		}
		assert.Less(t, len(r.buf), shrinkAbove)
	})
	t.Run("a popped slot no longer references its item", func(t *testing.T) {
		var r Ring[*int]
		x := 1
		r.Push(&x)
		r.Pop()
		for _, p := range r.buf {
			assert.Nil(t, p)
		}
	})
	t.Run("alternating push and pop at any depth stops resizing after one cycle", func(t *testing.T) {
		for depth := 1; depth <= 1100; depth++ {
			for _, pushFirst := range []bool{true, false} {
				var r Ring[int]
				for i := range depth {
					r.Push(i)
				}
				allocs := testing.AllocsPerRun(10, func() {
					if pushFirst {
						r.Push(1)
						r.Pop()
					} else {
						r.Pop()
						r.Push(1)
					}
				})
				require.Zero(t, allocs, "depth %d, push first %v: the ring resizes back and forth", depth, pushFirst)
			}
		}
	})
}

// The informer's listener sets Floor to client-go's initialBufferSize (1024): the ring
// never shrinks below it, and a burst still gives its space back down to it.
func TestRingWithAFloor(t *testing.T) {
	t.Run("a drained ring gives back the space of a burst, down to its floor", func(t *testing.T) {
		r := Ring[int]{Floor: 1024}
		for i := range 100_000 {
			r.Push(i)
		}
		require.GreaterOrEqual(t, r.Cap(), 100_000)
		for range 100_000 {
			r.Pop()
		}
		assert.Equal(t, 1024, r.Cap())
	})
	t.Run("a floor that is not a power of two is rounded up", func(t *testing.T) {
		r := Ring[int]{Floor: 1000}
		r.Push(1)
		assert.Equal(t, 1024, r.Cap())
	})
	t.Run("alternating push and pop at any depth stops resizing after one cycle", func(t *testing.T) {
		for depth := 1; depth <= 2100; depth += 7 {
			r := Ring[int]{Floor: 1024}
			for i := range depth {
				r.Push(i)
			}
			allocs := testing.AllocsPerRun(10, func() {
				r.Pop()
				r.Push(1)
			})
			require.Zero(t, allocs, "depth %d: the ring resizes back and forth", depth)
		}
	})
}
