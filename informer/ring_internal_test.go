package informer

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRingIsAFIFOThatGrowsWithoutLosingOrder(t *testing.T) {
	r := newRing[int](2)
	var model []int
	rng := rand.New(rand.NewPCG(1, 2))
	next := 0
	for range 10000 {
		if rng.IntN(3) > 0 { // push twice as often as pop, so it grows
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
		require.Equal(t, model[0], got)
		model = model[1:]
	}
	require.Equal(t, len(model), r.len())
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
