package reflector

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBackoff(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seq := func(b *backoff, n int) []time.Duration {
		var out []time.Duration
		now := t0
		for range n {
			d := b.Next(now)
			out = append(out, d)
			now = now.Add(d) // the next failure comes right after the delay
		}
		return out
	}
	ms := time.Millisecond
	t.Run("without jitter the delay doubles from 800ms and is capped at 30s", func(t *testing.T) {
		b, err := newBackoff(BackoffOptions{})
		require.NoError(t, err)
		b.rand = func() float64 { return 0 }
		assert.Equal(t, []time.Duration{800 * ms, 1600 * ms, 3200 * ms, 6400 * ms, 12800 * ms, 25600 * ms, 30 * time.Second, 30 * time.Second}, seq(b, 8))
	})
	t.Run("jitter stretches each delay by up to 100 percent", func(t *testing.T) {
		b, err := newBackoff(BackoffOptions{})
		require.NoError(t, err)
		b.rand = func() float64 { return 0.5 }
		assert.Equal(t, []time.Duration{1200 * ms, 2400 * ms, 4800 * ms}, seq(b, 3))
	})
	t.Run("two minutes without a failure start the sequence over", func(t *testing.T) {
		b, err := newBackoff(BackoffOptions{})
		require.NoError(t, err)
		b.rand = func() float64 { return 0 }
		seq(b, 5)
		now := t0.Add(time.Hour)
		assert.Equal(t, 800*ms, b.Next(now))
	})
	t.Run("a long outage keeps the delay at the cap instead of dropping back every two minutes", func(t *testing.T) {
		b, err := newBackoff(BackoffOptions{})
		require.NoError(t, err)
		b.rand = func() float64 { return 0 }
		delays := seq(b, 40) // about 18 minutes of continuous failures
		assert.Equal(t, 30*time.Second, delays[len(delays)-1])
		for _, d := range delays[6:] {
			assert.Equal(t, 30*time.Second, d)
		}
	})
	t.Run("custom options replace the defaults field by field", func(t *testing.T) {
		b, err := newBackoff(BackoffOptions{Initial: 10 * ms, Max: 25 * ms, Factor: 3})
		require.NoError(t, err)
		b.rand = func() float64 { return 0 }
		assert.Equal(t, []time.Duration{10 * ms, 25 * ms, 25 * ms}, seq(b, 3))
	})
	t.Run("an initial delay above the cap starts at the cap", func(t *testing.T) {
		b, err := newBackoff(BackoffOptions{Initial: time.Minute, Max: time.Second})
		require.NoError(t, err)
		b.rand = func() float64 { return 0 }
		assert.Equal(t, []time.Duration{time.Second, time.Second}, seq(b, 2))
	})
}
