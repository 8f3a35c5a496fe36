package workqueue

import (
	"fmt"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

func TestBucketRateLimiter(t *testing.T) {
	t.Run("a full bucket lets a burst through, then spaces calls 1/QPS apart", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r, err := NewBucketRateLimiter[string](BucketOptions{QPS: 2, Burst: 3})
			require.NoError(t, err)
			var got []time.Duration
			for range 6 {
				got = append(got, r.When("any"))
			}
			ms := time.Millisecond
			assert.Equal(t, []time.Duration{0, 0, 0, 500 * ms, 1000 * ms, 1500 * ms}, got)
		})
	})
	t.Run("the bucket refills with time, up to the burst", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r, err := NewBucketRateLimiter[string](BucketOptions{QPS: 10, Burst: 2})
			require.NoError(t, err)
			r.When("a")
			r.When("a")
			assert.Equal(t, 100*time.Millisecond, r.When("a"), "empty: wait for one token")
			time.Sleep(time.Hour) // fake time: refills far beyond the burst
			assert.Zero(t, r.When("a"))
			assert.Zero(t, r.When("a"))
			assert.Equal(t, 100*time.Millisecond, r.When("a"), "the refill stops at the burst")
		})
	})
	t.Run("the zero options are 10 qps and a burst of 100", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r, err := NewBucketRateLimiter[string](BucketOptions{})
			require.NoError(t, err)
			for range 100 {
				require.Zero(t, r.When("a"))
			}
			assert.Equal(t, 100*time.Millisecond, r.When("a"))
		})
	})
	t.Run("an infinite QPS never delays", func(t *testing.T) {
		r, err := NewBucketRateLimiter[string](BucketOptions{QPS: math.Inf(1), Burst: 1})
		require.NoError(t, err)
		for range 1000 {
			require.Zero(t, r.When("a"))
		}
	})
	t.Run("the bucket tracks no items", func(t *testing.T) {
		r, err := NewBucketRateLimiter[string](BucketOptions{})
		require.NoError(t, err)
		r.When("a")
		r.Forget("a")
		assert.Zero(t, r.NumRequeues("a"))
	})
}

// TestBucketMatchesXTimeRate replays one random schedule of calls through our bucket
// and through golang.org/x/time/rate (what client-go uses, via Reserve().Delay()), on
// the fake clock, and requires the same delay at every call.
func TestBucketMatchesXTimeRate(t *testing.T) {
	tests := []struct {
		qps   float64
		burst int
	}{
		{qps: 10, burst: 100},
		{qps: 1, burst: 1},
		{qps: 50, burst: 300},
		{qps: 0.5, burst: 3},
		{qps: 1000, burst: 7},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("qps %v burst %d gives the same delays as x/time/rate", tt.qps, tt.burst), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ours, err := NewBucketRateLimiter[int](BucketOptions{QPS: tt.qps, Burst: tt.burst})
				require.NoError(t, err)
				theirs := rate.NewLimiter(rate.Limit(tt.qps), tt.burst)
				r := newRand(uint64(i))
				for call := range 3000 {
					// Mostly bursts at one instant, sometimes gaps long enough to refill.
					if r.IntN(4) == 0 {
						time.Sleep(time.Duration(r.ExpFloat64() * float64(time.Second) / tt.qps))
					}
					want := theirs.Reserve().Delay()
					got := ours.When(call)
					require.InDelta(t, float64(want), float64(got), 1,
						"call %d at %v: x/time/rate says %v, we say %v", call, time.Now(), want, got)
				}
			})
		})
	}
}
