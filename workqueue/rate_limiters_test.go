package workqueue

import (
	"fmt"
	"math"
	"math/big"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestItemExponentialFailureRateLimiter(t *testing.T) {
	t.Run("each failure doubles the delay, starting at the base, up to the max", func(t *testing.T) {
		r, err := NewItemExponentialFailureRateLimiter[string](ExponentialFailureOptions{BaseDelay: time.Millisecond, MaxDelay: time.Second})
		require.NoError(t, err)
		want := []time.Duration{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}
		for i, w := range want {
			assert.Equal(t, w*time.Millisecond, r.When("a"), "failure %d", i)
		}
		assert.Equal(t, time.Second, r.When("a"), "1024ms is capped")
		assert.Equal(t, time.Second, r.When("a"))
		assert.Equal(t, 12, r.NumRequeues("a"))
	})
	t.Run("items back off independently", func(t *testing.T) {
		r, err := NewItemExponentialFailureRateLimiter[string](ExponentialFailureOptions{BaseDelay: time.Millisecond, MaxDelay: time.Second})
		require.NoError(t, err)
		r.When("a")
		r.When("a")
		assert.Equal(t, time.Millisecond, r.When("b"))
		assert.Equal(t, 2, r.NumRequeues("a"))
		assert.Equal(t, 1, r.NumRequeues("b"))
	})
	t.Run("Forget resets the backoff and the count", func(t *testing.T) {
		r, err := NewItemExponentialFailureRateLimiter[string](ExponentialFailureOptions{BaseDelay: time.Millisecond, MaxDelay: time.Second})
		require.NoError(t, err)
		r.When("a")
		r.When("a")
		r.Forget("a")
		assert.Equal(t, 0, r.NumRequeues("a"))
		assert.Equal(t, time.Millisecond, r.When("a"))
		r.Forget("a")
		assert.Empty(t, r.failures, "Forget must free the entry")
	})
	t.Run("the zero options give 5ms up to 1000s", func(t *testing.T) {
		r, err := NewItemExponentialFailureRateLimiter[string](ExponentialFailureOptions{})
		require.NoError(t, err)
		assert.Equal(t, 5*time.Millisecond, r.When("a"))
		assert.Equal(t, 10*time.Millisecond, r.When("a"))
		for range 100 {
			r.When("a")
		}
		assert.Equal(t, 1000*time.Second, r.When("a"))
	})
	t.Run("a product that overflows a Duration gives the max", func(t *testing.T) {
		r, err := NewItemExponentialFailureRateLimiter[string](ExponentialFailureOptions{BaseDelay: time.Hour, MaxDelay: time.Duration(math.MaxInt64)})
		require.NoError(t, err)
		var last time.Duration
		for range 200 {
			d := r.When("a")
			require.Positive(t, d, "the delay wrapped around")
			require.GreaterOrEqual(t, d, last, "the delay went down")
			last = d
		}
		assert.Equal(t, time.Duration(math.MaxInt64), last)
	})
}

// TestExponentialDelayIsExact checks the integer arithmetic against the exact value of
// min(base·2^exp, max), computed with math/big.
func TestExponentialDelayIsExact(t *testing.T) {
	bases := []time.Duration{1, 3, 1024, time.Microsecond, 5 * time.Millisecond, 777 * time.Millisecond, time.Hour, math.MaxInt64 / 3}
	maxes := []time.Duration{5 * time.Millisecond, time.Second, 1000 * time.Second, 24 * time.Hour, math.MaxInt64 / 2, math.MaxInt64}
	for _, base := range bases {
		for _, maxDelay := range maxes {
			if maxDelay < base {
				continue
			}
			t.Run(fmt.Sprintf("base %v max %v is exact at every failure count", base, maxDelay), func(t *testing.T) {
				for exp := range 130 {
					exact := new(big.Int).Lsh(big.NewInt(int64(base)), uint(exp))
					want := maxDelay
					if exact.Cmp(big.NewInt(int64(maxDelay))) < 0 {
						want = time.Duration(exact.Int64())
					}
					require.Equal(t, want, exponentialDelay(base, maxDelay, exp), "exp %d", exp)
				}
			})
		}
	}
	t.Run("a product of exactly 2^63 nanoseconds gives the max, not a negative delay", func(t *testing.T) {
		// client-go computes this product in float64, where MaxInt64 rounds up to 2^63,
		// so its overflow check lets 2^63 through and the conversion wraps negative.
		assert.Equal(t, time.Hour, exponentialDelay(1, time.Hour, 63))
		assert.Equal(t, time.Hour, exponentialDelay(1024, time.Hour, 53))
	})
}

func TestItemFastSlowRateLimiter(t *testing.T) {
	r, err := NewItemFastSlowRateLimiter[string](FastSlowOptions{FastDelay: 5 * time.Millisecond, SlowDelay: 10 * time.Second, MaxFastAttempts: 3})
	require.NoError(t, err)
	t.Run("the first MaxFastAttempts failures are fast, later ones slow", func(t *testing.T) {
		got := []time.Duration{r.When("a"), r.When("a"), r.When("a"), r.When("a"), r.When("a")}
		ms, s := 5*time.Millisecond, 10*time.Second
		assert.Equal(t, []time.Duration{ms, ms, ms, s, s}, got)
		assert.Equal(t, 5, r.NumRequeues("a"))
	})
	t.Run("Forget makes the item fast again", func(t *testing.T) {
		r.Forget("a")
		assert.Equal(t, 0, r.NumRequeues("a"))
		assert.Equal(t, 5*time.Millisecond, r.When("a"))
	})
}

// recordingLimiter returns a fixed delay and count and records Forget calls.
type recordingLimiter struct {
	delay    time.Duration
	requeues int
	forgot   []string
}

func (r *recordingLimiter) When(string) time.Duration { return r.delay }
func (r *recordingLimiter) NumRequeues(string) int    { return r.requeues }
func (r *recordingLimiter) Forget(item string)        { r.forgot = append(r.forgot, item) }

func TestMaxOfRateLimiter(t *testing.T) {
	a := &recordingLimiter{delay: time.Second, requeues: 7}
	b := &recordingLimiter{delay: time.Minute, requeues: 2}
	r, err := NewMaxOfRateLimiter[string](a, b)
	require.NoError(t, err)
	t.Run("When is the longest delay", func(t *testing.T) {
		assert.Equal(t, time.Minute, r.When("x"))
	})
	t.Run("NumRequeues is the largest count", func(t *testing.T) {
		assert.Equal(t, 7, r.NumRequeues("x"))
	})
	t.Run("Forget reaches every limiter", func(t *testing.T) {
		r.Forget("x")
		assert.Equal(t, []string{"x"}, a.forgot)
		assert.Equal(t, []string{"x"}, b.forgot)
	})
	t.Run("every limiter records the failure, not just the strictest", func(t *testing.T) {
		exp := newItemExponentialFailure[string](time.Millisecond, time.Second)
		m, err := NewMaxOfRateLimiter[string](&recordingLimiter{delay: time.Hour}, exp)
		require.NoError(t, err)
		m.When("y")
		m.When("y")
		assert.Equal(t, 2, exp.NumRequeues("y"))
	})
}

func TestWithMaxWaitRateLimiter(t *testing.T) {
	inner := &recordingLimiter{delay: time.Hour, requeues: 3}
	r, err := NewWithMaxWaitRateLimiter[string](inner, time.Minute)
	require.NoError(t, err)
	t.Run("a long delay is capped", func(t *testing.T) {
		assert.Equal(t, time.Minute, r.When("x"))
	})
	t.Run("a short delay is kept", func(t *testing.T) {
		inner.delay = time.Second
		assert.Equal(t, time.Second, r.When("x"))
	})
	t.Run("NumRequeues and Forget go to the inner limiter", func(t *testing.T) {
		assert.Equal(t, 3, r.NumRequeues("x"))
		r.Forget("x")
		assert.Equal(t, []string{"x"}, inner.forgot)
	})
}

func TestDefaultRateLimiters(t *testing.T) {
	t.Run("the controller default backs off per item from 5ms", func(t *testing.T) {
		r := DefaultControllerRateLimiter[string]()
		assert.Equal(t, 5*time.Millisecond, r.When("a"))
		assert.Equal(t, 10*time.Millisecond, r.When("a"))
		assert.Equal(t, 2, r.NumRequeues("a"))
		r.Forget("a")
		assert.Equal(t, 0, r.NumRequeues("a"))
	})
	t.Run("the controller default lets 100 retries through, then paces them at 10 per second", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := DefaultControllerRateLimiter[int]()
			for i := range 100 {
				require.Equal(t, 5*time.Millisecond, r.When(i), "item %d is within the burst", i)
			}
			assert.Equal(t, 100*time.Millisecond, r.When(100), "the 101st retry waits for one token at 10 qps")
			assert.Equal(t, 200*time.Millisecond, r.When(101))
		})
	})
	t.Run("the item-based default starts at 1ms", func(t *testing.T) {
		r := DefaultItemBasedRateLimiter[string]()
		assert.Equal(t, time.Millisecond, r.When("a"))
		assert.Equal(t, 2*time.Millisecond, r.When("a"))
	})
}

func TestRateLimiterConstructorsRejectBadInput(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"a negative base delay is rejected", second(NewItemExponentialFailureRateLimiter[int](ExponentialFailureOptions{BaseDelay: -1}))},
		{"a negative max delay is rejected", second(NewItemExponentialFailureRateLimiter[int](ExponentialFailureOptions{MaxDelay: -1}))},
		{"a max delay below the base is rejected", second(NewItemExponentialFailureRateLimiter[int](ExponentialFailureOptions{BaseDelay: time.Second, MaxDelay: time.Millisecond}))},
		{"a base above the default max is rejected", second(NewItemExponentialFailureRateLimiter[int](ExponentialFailureOptions{BaseDelay: 2000 * time.Second}))},
		{"a negative fast delay is rejected", second(NewItemFastSlowRateLimiter[int](FastSlowOptions{FastDelay: -1}))},
		{"a negative slow delay is rejected", second(NewItemFastSlowRateLimiter[int](FastSlowOptions{SlowDelay: -1}))},
		{"a negative attempt count is rejected", second(NewItemFastSlowRateLimiter[int](FastSlowOptions{MaxFastAttempts: -1}))},
		{"a negative QPS is rejected", second(NewBucketRateLimiter[int](BucketOptions{QPS: -1}))},
		{"a NaN QPS is rejected", second(NewBucketRateLimiter[int](BucketOptions{QPS: math.NaN()}))},
		{"a negative burst is rejected", second(NewBucketRateLimiter[int](BucketOptions{Burst: -1}))},
		{"MaxOf of nothing is rejected", second(NewMaxOfRateLimiter[int]())},
		{"MaxOf of a nil limiter is rejected", second(NewMaxOfRateLimiter[int](DefaultItemBasedRateLimiter[int](), nil))},
		{"WithMaxWait of a nil limiter is rejected", second(NewWithMaxWaitRateLimiter[int](nil, time.Second))},
		{"a negative max wait is rejected", second(NewWithMaxWaitRateLimiter(DefaultItemBasedRateLimiter[int](), -1))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, tt.err, ErrInvalidArgument)
		})
	}
}

// second returns the error of a constructor call.
func second[V any](_ V, err error) error { return err }
