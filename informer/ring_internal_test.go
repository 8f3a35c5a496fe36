package informer

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRingIsAFIFOThatGrowsAndShrinksWithoutLosingOrder(t *testing.T) {
	r := newRing[int](4)
	var model []int
	rng := rand.New(rand.NewPCG(1, 2))
	next := 0
	for step := range 40000 {
		// Phases of mostly-push and mostly-pop make the ring grow, wrap and shrink.
		pushBias := 30 + 40*((step/4000)%2)
		if rng.IntN(100) < pushBias {
			r.push(next)
			model = append(model, next)
			next++
			continue
		}
		got, ok := r.pop()
		if len(model) == 0 {
			require.False(t, ok)
			continue
		}
		require.True(t, ok)
		require.Equal(t, model[0], got, "step %d", step)
		model = model[1:]
		require.Equal(t, len(model), r.len(), "step %d", step)
	}
}

func TestListenerRingMemory(t *testing.T) {
	t.Run("a drained ring gives back the space of a burst, down to its initial size", func(t *testing.T) {
		r := newRing[int](initialBufferSize)
		for i := range 100_000 {
			r.push(i)
		}
		require.GreaterOrEqual(t, r.capacity(), 100_000)
		for range 100_000 {
			r.pop()
		}
		assert.Equal(t, initialBufferSize, r.capacity())
	})
	t.Run("a popped slot no longer references its notification", func(t *testing.T) {
		r := newRing[*int](4)
		x := 1
		r.push(&x)
		r.pop()
		for _, p := range r.buf {
			assert.Nil(t, p)
		}
	})
	t.Run("alternating push and pop at any depth stops resizing after one cycle", func(t *testing.T) {
		for depth := 1; depth <= 300; depth++ {
			for _, pushFirst := range []bool{true, false} {
				r := newRing[int](4)
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

func TestDetermineResyncPeriodFollowsClientGo(t *testing.T) {
	cases := []struct {
		name                 string
		desired, check, want int
	}{
		{"a handler that wants none gets none", 0, 5, 0},
		{"an informer that never resyncs gives none", 10, 0, 0},
		{"a period below the check period is raised to it", 3, 5, 5},
		{"a longer period is kept", 10, 5, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.EqualValues(t, c.want, determineResyncPeriod(durationOf(c.desired), durationOf(c.check))/durationOf(1))
		})
	}
}

func durationOf(n int) time.Duration { return time.Duration(n) * time.Second }
