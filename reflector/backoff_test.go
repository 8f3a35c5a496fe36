package reflector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	s := time.Second
	t.Run("without jitter the delay doubles from 800ms and is capped at 30s", func(t *testing.T) {
		b, err := newBackoff(BackoffOptions{}, t0)
		require.NoError(t, err)
		b.rand = func() float64 { return 0 }
		assert.Equal(t, []time.Duration{800 * ms, 1600 * ms, 3200 * ms, 6400 * ms, 12800 * ms, 25600 * ms, 30 * s, 30 * s}, seq(b, 8))
	})
	t.Run("jitter stretches each delay by up to 100 percent", func(t *testing.T) {
		b, err := newBackoff(BackoffOptions{}, t0)
		require.NoError(t, err)
		b.rand = func() float64 { return 0.5 }
		assert.Equal(t, []time.Duration{1200 * ms, 2400 * ms, 4800 * ms}, seq(b, 3))
	})
	t.Run("a failure more than two minutes after the sequence began starts it over, even in the middle of an outage", func(t *testing.T) {
		b, err := newBackoff(BackoffOptions{}, t0)
		require.NoError(t, err)
		b.rand = func() float64 { return 0 }
		// Failures at 0s, 0.8s, 2.4s, 5.6s, 12s, 24.8s, 50.4s, 80.4s, 110.4s, then
		// 140.4s: more than 2 minutes after the sequence began, so 800ms again.
		assert.Equal(t, []time.Duration{800 * ms, 1600 * ms, 3200 * ms, 6400 * ms, 12800 * ms, 25600 * ms, 30 * s, 30 * s, 30 * s, 800 * ms, 1600 * ms}, seq(b, 11))
	})
	t.Run("a failure exactly two minutes after the sequence began goes on with it", func(t *testing.T) {
		b, err := newBackoff(BackoffOptions{}, t0)
		require.NoError(t, err)
		b.rand = func() float64 { return 0 }
		assert.Equal(t, 800*ms, b.Next(t0))
		assert.Equal(t, 1600*ms, b.Next(t0.Add(2*time.Minute)))
		assert.Equal(t, 800*ms, b.Next(t0.Add(2*time.Minute+time.Nanosecond)))
	})
	t.Run("after a quiet hour the next failure starts over", func(t *testing.T) {
		b, err := newBackoff(BackoffOptions{}, t0)
		require.NoError(t, err)
		b.rand = func() float64 { return 0 }
		seq(b, 5)
		assert.Equal(t, 800*ms, b.Next(t0.Add(time.Hour)))
	})
	t.Run("custom options replace the defaults field by field", func(t *testing.T) {
		b, err := newBackoff(BackoffOptions{Initial: 10 * ms, Max: 25 * ms, Factor: 3}, t0)
		require.NoError(t, err)
		b.rand = func() float64 { return 0 }
		assert.Equal(t, []time.Duration{10 * ms, 25 * ms, 25 * ms}, seq(b, 3))
	})
	t.Run("an initial delay above the cap starts at the cap", func(t *testing.T) {
		b, err := newBackoff(BackoffOptions{Initial: time.Minute, Max: time.Second}, t0)
		require.NoError(t, err)
		b.rand = func() float64 { return 0 }
		assert.Equal(t, []time.Duration{time.Second, time.Second}, seq(b, 2))
	})
}

// TestALongOutageStartsTheBackoffOverAfterTwoMinutes: the default reflector syncs
// through a watch-list, watches for 10 s, and then the API server is gone for 5
// minutes: every re-watch is refused (W2). The delays between the attempts grow to
// 30–60 s; the first attempt more than 2 minutes after Run began starts the sequence
// over at 800ms (plus jitter), as client-go's does. So when the server returns, the
// reflector is not always 30–60 s away from its next attempt.
func TestALongOutageStartsTheBackoffOverAfterTwoMinutes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		began := time.Now() // Run begins at once, and with it the backoff's sequence
		outageStarts := began.Add(10 * time.Second)
		outageEnds := outageStarts.Add(5 * time.Minute)
		var mu sync.Mutex
		var refused []time.Time // guarded by mu
		back := make(chan struct{})
		lw := ListWatch[cmT]{
			ListFunc: func(context.Context, metav1.ListOptions) (ListResult[cmT], error) {
				t.Error("a LIST: the watch-list succeeded and every later watch was refused, so nothing should relist")
				return ListResult[cmT]{}, errors.New("no LIST in this test")
			},
			WatchFunc: func(_ context.Context, opts metav1.ListOptions) (Watch[cmT], error) {
				now := time.Now()
				w := NewFakeWatch[cmT]()
				switch {
				case opts.SendInitialEvents != nil:
					// Goroutine owned by the fake server: the state (no objects), then
					// the stream ends when the outage starts, or when the reflector stops it.
					go func() {
						if !w.Send(bookmarked(initialEventsEnd("5"))) {
							return
						}
						timer := time.NewTimer(time.Until(outageStarts))
						defer timer.Stop()
						select {
						case <-timer.C:
							w.Close()
						case <-w.Stopped():
						}
					}()
				case now.Before(outageEnds):
					mu.Lock()
					refused = append(refused, now)
					mu.Unlock()
					return nil, fmt.Errorf("dial tcp 127.0.0.1:6443: %w", syscall.ECONNREFUSED)
				default:
					close(back) // the server is back: this watch is held until stopped
				}
				return w, nil
			},
		}
		r, err := NewReflector[cmT](lw, &recordingStore{}, Options[cmT]{})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		// Goroutine owned by this test: Run, which exits when ctx is cancelled below.
		go func() {
			defer close(done)
			r.Run(ctx)
		}()
		<-back
		cancel()
		<-done

		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, refused)
		assert.Equal(t, outageStarts, refused[0], "the first re-watch follows the end of the stream at once")
		startOver := -1
		for i := 1; i < len(refused); i++ {
			gap := refused[i].Sub(refused[i-1])
			assert.GreaterOrEqual(t, gap, 800*time.Millisecond, "delay %d", i)
			assert.Less(t, gap, 60*time.Second, "delay %d: 30s at most, plus up to 100%% jitter", i)
			if startOver < 0 && refused[i-1].Sub(began) > 2*time.Minute {
				startOver = i
			}
		}
		require.Positive(t, startOver, "an attempt more than 2 minutes after Run began, with one after it: %v", refused)
		gap := refused[startOver].Sub(refused[startOver-1])
		assert.Less(t, gap, 1600*time.Millisecond, "the delay after the first attempt more than 2 minutes in is 800ms plus jitter again; the attempts: %v", refused)
		assert.GreaterOrEqual(t, refused[startOver-1].Sub(refused[startOver-2]), 30*time.Second, "and the one before it was at the cap")
	})
}
