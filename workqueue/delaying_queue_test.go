package workqueue

import (
	"bytes"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// advance moves the bubble's fake clock forward by d and lets every goroutine that this
// wakes (timer callbacks included) run until it blocks again.
//
// It must only be called inside synctest.Test: there time.Sleep returns as soon as
// every other goroutine in the bubble is blocked, without waiting on the wall clock.
func advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

func TestDelayingQueueAddAfter(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, q *DelayingQueue[string])
	}{
		{"an item is added exactly when its delay has passed", func(t *testing.T, q *DelayingQueue[string]) {
			q.AddAfter("a", 50*time.Millisecond)
			assert.Equal(t, 0, q.Len())
			advance(50*time.Millisecond - time.Nanosecond)
			assert.Equal(t, 0, q.Len(), "a was added early")
			advance(time.Nanosecond)
			assert.Equal(t, 1, q.Len(), "a was not added on time")
		}},
		{"a zero or negative delay is a plain Add", func(t *testing.T, q *DelayingQueue[string]) {
			start := time.Now()
			q.AddAfter("zero", 0)
			q.AddAfter("negative", -time.Hour)
			assert.Equal(t, 2, q.Len())
			assert.Equal(t, []string{"zero", "negative"}, drainAll(t, q))
			assert.Equal(t, start, time.Now(), "no time may pass")
		}},
		{"a repeated AddAfter moves an item earlier", func(t *testing.T, q *DelayingQueue[string]) {
			q.AddAfter("a", 10*time.Second)
			q.AddAfter("a", 5*time.Second)
			advance(5 * time.Second)
			assert.Equal(t, []string{"a"}, drainAll(t, q))
			advance(5 * time.Second)
			assert.Equal(t, 0, q.Len(), "the superseded later time must not add a again")
		}},
		{"a repeated AddAfter never moves an item later", func(t *testing.T, q *DelayingQueue[string]) {
			q.AddAfter("a", 5*time.Second)
			q.AddAfter("a", 10*time.Second)
			advance(5 * time.Second)
			assert.Equal(t, []string{"a"}, drainAll(t, q))
			advance(5 * time.Second)
			assert.Equal(t, 0, q.Len(), "the later time was ignored, so a is added once")
		}},
		{"items come out in the order of their due times, ties first-in first-out", func(t *testing.T, q *DelayingQueue[string]) {
			q.AddAfter("c", 3*time.Second)
			q.AddAfter("a", 1*time.Second)
			q.AddAfter("b1", 2*time.Second)
			q.AddAfter("b2", 2*time.Second)
			advance(3 * time.Second)
			assert.Equal(t, []string{"a", "b1", "b2", "c"}, drainAll(t, q))
		}},
		{"an earlier item added later re-arms the timer", func(t *testing.T, q *DelayingQueue[string]) {
			q.AddAfter("late", time.Hour)
			q.AddAfter("soon", time.Second)
			advance(time.Second)
			assert.Equal(t, []string{"soon"}, drainAll(t, q))
		}},
		{"a waiting item that is also added directly is processed now and when due", func(t *testing.T, q *DelayingQueue[string]) {
			q.AddAfter("a", time.Second)
			q.Add("a")
			assert.Equal(t, []string{"a"}, drainAll(t, q))
			advance(time.Second)
			assert.Equal(t, []string{"a"}, drainAll(t, q))
		}},
		{"a delay too long to represent means never, not now", func(t *testing.T, q *DelayingQueue[string]) {
			advance(time.Second) // so that now + MaxInt64 would overflow
			q.AddAfter("never", time.Duration(math.MaxInt64))
			q.AddAfter("soon", time.Second)
			advance(time.Hour)
			assert.Equal(t, []string{"soon"}, drainAll(t, q))
		}},
		{"AddAfter after ShutDown is ignored", func(t *testing.T, q *DelayingQueue[string]) {
			q.ShutDown()
			q.AddAfter("a", 0)
			q.AddAfter("b", time.Second)
			advance(time.Second)
			assert.Equal(t, 0, q.Len())
		}},
		{"ShutDown drops waiting items and stops the timer", func(t *testing.T, q *DelayingQueue[string]) {
			q.AddAfter("a", time.Second)
			q.ShutDown()
			assert.Zero(t, q.waiting.len())
			assert.False(t, q.timer.Stop(), "the timer was still armed after ShutDown")
			advance(time.Second)
			_, shutdown := q.Get()
			assert.True(t, shutdown)
		}},
		{"ShutDownWithDrain also stops the timer", func(t *testing.T, q *DelayingQueue[string]) {
			q.AddAfter("a", time.Second)
			require.NoError(t, q.ShutDownWithDrain(t.Context()))
			assert.False(t, q.timer.Stop(), "the timer was still armed after ShutDownWithDrain")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := NewDelayingQueue[string](Options{})
				defer q.ShutDown()
				tt.run(t, q)
			})
		})
	}
}

func TestDelayingQueueGetWaitsForTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelayingQueue[string](Options{})
		defer q.ShutDown()
		start := time.Now()
		q.AddAfter("a", 3*time.Second)
		assert.Equal(t, "a", get(t, q), "a blocked Get must be woken by the timer")
		assert.Equal(t, 3*time.Second, time.Since(start))
	})
}

func TestDelayingQueueManyRandomDelays(t *testing.T) {
	t.Run("items added at one instant come out at their earliest due time, in order", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := NewDelayingQueue[int](Options{})
			defer q.ShutDown()
			r := newRand(1)
			start := time.Now()
			due := map[int]time.Duration{}
			for range 5000 {
				k := r.IntN(1000) // repeats exercise "move earlier"
				d := time.Duration(1+r.IntN(10_000)) * time.Millisecond
				q.AddAfter(k, d)
				if cur, ok := due[k]; !ok || d < cur {
					due[k] = d
				}
			}
			var got []time.Duration
			for range len(due) {
				k := get(t, q)
				q.Done(k)
				require.Equal(t, due[k], time.Since(start), "key %d added at the wrong time", k)
				got = append(got, time.Since(start))
			}
			assert.True(t, slices.IsSorted(got))
			assert.Zero(t, q.Len())
			q.waitMu.Lock()
			defer q.waitMu.Unlock()
			assert.Zero(t, q.waiting.len())
			assert.Empty(t, q.waiting.heap)
		})
	})
	t.Run("items added while others wait each come out on time", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := NewDelayingQueue[int](Options{})
			r := newRand(2)
			gotAt := map[int]time.Time{}
			done := make(chan struct{})
			go func() { // consumer; exits when the queue shuts down
				defer close(done)
				for {
					k, shutdown := q.Get()
					if shutdown {
						return
					}
					gotAt[k] = time.Now()
					q.Done(k)
				}
			}()
			dueAt := map[int]time.Time{}
			for k := range 500 {
				d := time.Duration(1+r.IntN(2000)) * time.Millisecond
				dueAt[k] = time.Now().Add(d)
				q.AddAfter(k, d)
				advance(time.Duration(r.IntN(20)) * time.Millisecond)
			}
			advance(3 * time.Second)
			q.ShutDown()
			<-done
			require.Len(t, gotAt, len(dueAt))
			for k, want := range dueAt {
				assert.Equal(t, want, gotAt[k], "key %d", k)
			}
		})
	})
}

func TestDelayingQueueLogsDroppedItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		q := NewDelayingQueue[int](Options{Name: "retry", Logger: logger})
		for i := range 3 {
			q.AddAfter(i, time.Minute)
		}
		q.ShutDown()
		assert.Contains(t, buf.String(), "dropped=3")
		assert.Contains(t, buf.String(), "queue=retry")
	})
}

func TestWaitSetStaysCompact(t *testing.T) {
	tests := []struct{ items, moves int }{
		{items: 1, moves: 10_000},
		{items: 10, moves: 10_000},
		{items: 1000, moves: 20_000},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("moving %d items earlier %d times keeps the heap near its live size", tt.items, tt.moves), func(t *testing.T) {
			w := newWaitSet[int]()
			readyAt := int64(tt.moves+1) * int64(time.Second)
			for i := range tt.moves {
				readyAt -= int64(time.Millisecond) // always earlier: a new entry each time
				w.insert(i%tt.items, readyAt)
				require.Equal(t, len(w.heap), w.len()+w.stale, "len(heap) == live + stale")
				require.LessOrEqual(t, len(w.heap), 2*w.len()+compactAbove+1)
			}
			// Every item comes out once, at its latest (earliest) time.
			seen := map[int]bool{}
			for {
				item, ok := w.popDue(readyAt + int64(time.Hour))
				if !ok {
					break
				}
				require.False(t, seen[item], "item %d came out twice", item)
				seen[item] = true
			}
			assert.Len(t, seen, min(tt.items, tt.moves))
			assert.Zero(t, w.len())
		})
	}
}

// An item whose time has come is readied by the next AddAfter even if the timer has
// not run yet, as client-go's waiting loop readies what is due whenever an item
// arrives: a burst of short delays then never piles up in the waiting set.
func TestAddAfterReadiesWhatIsDueBeforeTheTimerRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelayingQueue[string](Options{})
		defer q.ShutDown()
		// "a" became due a second ago, and the timer has not fired for it: put it in
		// the waiting set directly, as a timer goroutine still waiting for the lock
		// would leave it.
		q.waitMu.Lock()
		q.waiting.insert("a", q.sinceEpoch()-int64(time.Second))
		q.waitMu.Unlock()
		require.Zero(t, q.Len())

		q.AddAfter("b", time.Hour)
		assert.Equal(t, 1, q.Len(), "a is in the queue")
		q.waitMu.Lock()
		waiting := q.waiting.len()
		q.waitMu.Unlock()
		assert.Equal(t, 1, waiting, "only b still waits")
		assert.Equal(t, "a", get(t, q))
	})
}
