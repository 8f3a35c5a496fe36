package workqueue

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRateLimitingQueue(t *testing.T) {
	newQueue := func(t *testing.T) *RateLimitingQueue[string] {
		t.Helper()
		limiter, err := NewItemExponentialFailureRateLimiter[string](ExponentialFailureOptions{BaseDelay: 10 * time.Millisecond, MaxDelay: time.Second})
		require.NoError(t, err)
		return NewRateLimitingQueue(RateLimitingOptions[string]{RateLimiter: limiter})
	}
	t.Run("AddRateLimited adds the item after the limiter's delay", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := newQueue(t)
			defer q.ShutDown()
			start := time.Now()
			q.AddRateLimited("a")
			assert.Equal(t, 0, q.Len())
			assert.Equal(t, "a", get(t, q))
			assert.Equal(t, 10*time.Millisecond, time.Since(start))
		})
	})
	t.Run("each retry without Forget waits twice as long", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := newQueue(t)
			defer q.ShutDown()
			var waits []time.Duration
			for range 4 {
				start := time.Now()
				q.AddRateLimited("a")
				a := get(t, q)
				waits = append(waits, time.Since(start))
				q.Done(a)
			}
			ms := time.Millisecond
			assert.Equal(t, []time.Duration{10 * ms, 20 * ms, 40 * ms, 80 * ms}, waits)
			assert.Equal(t, 4, q.NumRequeues("a"))
		})
	})
	t.Run("Forget resets the item's backoff", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := newQueue(t)
			defer q.ShutDown()
			q.AddRateLimited("a")
			q.Done(get(t, q))
			q.AddRateLimited("a")
			a := get(t, q)
			q.Forget(a)
			q.Done(a)
			assert.Equal(t, 0, q.NumRequeues("a"))
			start := time.Now()
			q.AddRateLimited("a")
			get(t, q)
			assert.Equal(t, 10*time.Millisecond, time.Since(start))
		})
	})
	t.Run("the zero options use the default controller limiter", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := NewRateLimitingQueue(RateLimitingOptions[string]{})
			defer q.ShutDown()
			start := time.Now()
			q.AddRateLimited("a")
			get(t, q)
			assert.Equal(t, 5*time.Millisecond, time.Since(start))
		})
	})
	t.Run("ShutDown stops rate-limited items from arriving", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := newQueue(t)
			q.AddRateLimited("a")
			q.ShutDown()
			advance(time.Second)
			_, shutdown := q.Get()
			assert.True(t, shutdown)
		})
	})
}
