package workqueue

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// get calls Get and fails the test if the queue reports shutdown.
func get[T comparable](t *testing.T, q Interface[T]) T {
	t.Helper()
	item, shutdown := q.Get()
	require.False(t, shutdown, "Get reported shutdown")
	return item
}

// drainAll gets and finishes every queued item, returning them in order.
func drainAll[T comparable](t *testing.T, q Interface[T]) []T {
	t.Helper()
	var got []T
	for q.Len() > 0 {
		item := get(t, q)
		got = append(got, item)
		q.Done(item)
	}
	return got
}

func TestQueueRules(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, q *Queue[string])
	}{
		{"an item added many times before Get is handed out once", func(t *testing.T, q *Queue[string]) {
			q.Add("a")
			q.Add("a")
			q.Add("a")
			assert.Equal(t, 1, q.Len())
			assert.Equal(t, []string{"a"}, drainAll(t, q))
		}},
		{"items are handed out in the order they were first added", func(t *testing.T, q *Queue[string]) {
			for _, k := range []string{"c", "a", "b", "a", "c"} {
				q.Add(k)
			}
			assert.Equal(t, []string{"c", "a", "b"}, drainAll(t, q))
		}},
		{"an item added while processing is not handed out before Done", func(t *testing.T, q *Queue[string]) {
			q.Add("a")
			a := get(t, q)
			q.Add("a")
			assert.Equal(t, 0, q.Len(), "a is processing, so the second Add must wait for Done")
			q.Done(a)
			assert.Equal(t, 1, q.Len())
		}},
		{"an item added while processing is handed out again after Done", func(t *testing.T, q *Queue[string]) {
			q.Add("a")
			q.Add("b")
			a := get(t, q)
			q.Add("a")
			q.Add("a")
			q.Done(a)
			assert.Equal(t, []string{"b", "a"}, drainAll(t, q), "a goes to the back, once")
		}},
		{"an item that is done and not re-added is forgotten", func(t *testing.T, q *Queue[string]) {
			q.Add("a")
			q.Done(get(t, q))
			assert.Equal(t, 0, q.Len())
			assert.Empty(t, q.dirty, "no state may outlive the item's last Done")
			assert.Empty(t, q.processing)
		}},
		{"Done for an item that is not processing does not queue it twice", func(t *testing.T, q *Queue[string]) {
			q.Add("a")
			q.Done("a") // a stray Done: a is waiting, not processing
			assert.Equal(t, 1, q.Len())
			a := get(t, q)
			assert.Equal(t, 0, q.Len(), "a must not be handed out to a second worker")
			q.Done(a)
			q.Done(a) // a second Done is ignored too
			assert.Equal(t, 0, q.Len())
		}},
		{"Add after ShutDown is ignored", func(t *testing.T, q *Queue[string]) {
			q.ShutDown()
			q.Add("a")
			assert.Equal(t, 0, q.Len())
			_, shutdown := q.Get()
			assert.True(t, shutdown)
		}},
		{"ShutDown lets queued items drain before Get reports shutdown", func(t *testing.T, q *Queue[string]) {
			q.Add("a")
			q.Add("b")
			q.ShutDown()
			assert.True(t, q.ShuttingDown())
			assert.Equal(t, []string{"a", "b"}, drainAll(t, q))
			_, shutdown := q.Get()
			assert.True(t, shutdown)
		}},
		{"an item re-added before ShutDown is still handed out after its Done", func(t *testing.T, q *Queue[string]) {
			q.Add("a")
			a := get(t, q)
			q.Add("a")
			q.ShutDown()
			q.Done(a)
			assert.Equal(t, "a", get(t, q))
		}},
		{"ShutDown can be called more than once", func(t *testing.T, q *Queue[string]) {
			q.ShutDown()
			q.ShutDown()
			require.NoError(t, q.ShutDownWithDrain(t.Context()))
			assert.True(t, q.ShuttingDown())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := NewQueue[string](Options{})
			defer q.ShutDown()
			tt.run(t, q)
		})
	}
}

func TestQueueLogsAStrayDone(t *testing.T) {
	var buf bytes.Buffer
	q := NewQueue[string](Options{Name: "jobs", Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	defer q.ShutDown()
	q.Done("ghost")
	assert.Contains(t, buf.String(), "level=WARN")
	assert.Contains(t, buf.String(), "queue=jobs")
	assert.Contains(t, buf.String(), "item=ghost")
}

func TestQueueBlocking(t *testing.T) {
	t.Run("Get blocks until an item is added", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := NewQueue[int](Options{})
			defer q.ShutDown()
			got := make(chan int, 1)
			go func() { got <- get(t, q) }()
			synctest.Wait()
			require.Empty(t, got, "Get returned before anything was added")
			q.Add(7)
			synctest.Wait()
			require.Len(t, got, 1)
			assert.Equal(t, 7, <-got)
		})
	})
	t.Run("ShutDown wakes every blocked Get with shutdown", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := NewQueue[int](Options{})
			shut := make(chan bool, 3)
			for range 3 {
				go func() { _, s := q.Get(); shut <- s }()
			}
			synctest.Wait()
			require.Empty(t, shut)
			q.ShutDown()
			synctest.Wait()
			require.Len(t, shut, 3)
			for range 3 {
				assert.True(t, <-shut)
			}
		})
	})
}

func TestQueueShutDownWithDrain(t *testing.T) {
	t.Run("it waits for the items in processing", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := NewQueue[string](Options{})
			q.Add("a")
			a := get(t, q)
			result := make(chan error, 1)
			go func() { result <- q.ShutDownWithDrain(t.Context()) }()
			synctest.Wait()
			require.Empty(t, result, "drain returned while a was processing")
			assert.True(t, q.ShuttingDown())
			q.Done(a)
			synctest.Wait()
			require.Len(t, result, 1)
			assert.NoError(t, <-result)
		})
	})
	t.Run("it does not wait for items that are queued but not processing", func(t *testing.T) {
		q := NewQueue[string](Options{})
		q.Add("a")
		require.NoError(t, q.ShutDownWithDrain(t.Context()))
		assert.Equal(t, "a", get(t, q), "queued items stay available to workers")
	})
	t.Run("a context that ends stops the wait with its cause", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := NewQueue[string](Options{})
			q.Add("a")
			get(t, q)
			start := time.Now()
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			err := q.ShutDownWithDrain(ctx)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Contains(t, err.Error(), "1 items processing")
			assert.Equal(t, 5*time.Second, time.Since(start))
			assert.True(t, q.ShuttingDown())
		})
	})
	t.Run("ShutDown aborts the wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := NewQueue[string](Options{})
			q.Add("a")
			get(t, q)
			result := make(chan error, 1)
			go func() { result <- q.ShutDownWithDrain(t.Context()) }()
			synctest.Wait()
			require.Empty(t, result)
			q.ShutDown()
			synctest.Wait()
			require.Len(t, result, 1)
			assert.ErrorIs(t, <-result, ErrDrainAborted)
		})
	})
	t.Run("a nil context is rejected and shuts nothing down", func(t *testing.T) {
		q := NewQueue[string](Options{})
		defer q.ShutDown()
		//lint:ignore SA1012 the nil context is the bad input under test
		err := q.ShutDownWithDrain(nil)
		assert.ErrorIs(t, err, ErrInvalidArgument)
		assert.False(t, q.ShuttingDown())
	})
}

func TestQueueSteadyStateDoesNotAllocate(t *testing.T) {
	q := NewQueue[int](Options{})
	defer q.ShutDown()
	i := 0
	cycle := func() {
		q.Add(i)
		q.Add(i) // deduplicated
		item, _ := q.Get()
		q.Add(item) // re-added while processing
		q.Done(item)
		item, _ = q.Get()
		q.Done(item)
		i++
	}
	for range 100 { // let the queue and the map reach their working size
		cycle()
	}
	assert.Zero(t, testing.AllocsPerRun(1000, cycle))
}

// TestQueueMatchesModel replays random operations on a Queue and on a naive model of
// client-go's rules (a slice, a dirty set, a processing set), comparing every result.
func TestQueueMatchesModel(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprintf("the queue behaves like the naive model (seed %d)", seed), func(t *testing.T) {
			r := newRand(seed)
			q := NewQueue[int](Options{})
			defer q.ShutDown()
			m := newQueueModel()
			for step := range 3000 {
				key := r.IntN(12)
				switch op := r.IntN(100); {
				case op < 45:
					q.Add(key)
					m.add(key)
				case op < 75:
					if m.len() == 0 && !m.shuttingDown {
						continue // Get would block
					}
					item, shutdown := q.Get()
					wantItem, wantShutdown := m.get()
					require.Equal(t, wantShutdown, shutdown, "step %d: Get shutdown", step)
					require.Equal(t, wantItem, item, "step %d: Get item", step)
				case op < 98:
					if len(m.processing) > 0 && r.IntN(4) > 0 {
						key = m.anyProcessing(r)
					}
					q.Done(key)
					m.done(key)
				default:
					q.ShutDown()
					m.shuttingDown = true
				}
				require.Equal(t, m.len(), q.Len(), "step %d: Len", step)
				checkQueueInvariants(t, q)
				require.Equal(t, m.shuttingDown, q.ShuttingDown(), "step %d", step)
			}
		})
	}
}

// queueModel is the simplest correct statement of the rules, with a stray Done ignored.
type queueModel struct {
	queue        []int
	dirty        map[int]bool
	processing   map[int]bool
	shuttingDown bool
}

func newQueueModel() *queueModel {
	return &queueModel{dirty: map[int]bool{}, processing: map[int]bool{}}
}

func (m *queueModel) len() int { return len(m.queue) }

func (m *queueModel) add(k int) {
	if m.shuttingDown || m.dirty[k] {
		return
	}
	m.dirty[k] = true
	if !m.processing[k] {
		m.queue = append(m.queue, k)
	}
}

func (m *queueModel) get() (int, bool) {
	if len(m.queue) == 0 {
		return 0, true
	}
	k := m.queue[0]
	m.queue = m.queue[1:]
	delete(m.dirty, k)
	m.processing[k] = true
	return k, false
}

func (m *queueModel) done(k int) {
	if !m.processing[k] {
		return
	}
	delete(m.processing, k)
	if m.dirty[k] {
		m.queue = append(m.queue, k)
	}
}

func (m *queueModel) anyProcessing(r interface{ IntN(int) int }) int {
	keys := make([]int, 0, len(m.processing))
	for k := range 12 {
		if m.processing[k] {
			keys = append(keys, k)
		}
	}
	return keys[r.IntN(len(keys))]
}

// checkQueueInvariants checks the invariants documented on Queue's fields.
func checkQueueInvariants[T comparable](t *testing.T, q *Queue[T]) {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	inQueue := map[T]bool{}
	for item := range q.queue.All() {
		require.False(t, inQueue[item], "%v is in the queue twice", item)
		inQueue[item] = true
		require.Contains(t, q.dirty, item, "%v is in the queue but not dirty", item)
		require.NotContains(t, q.processing, item, "%v is in the queue and processing", item)
	}
	both := 0
	for item := range q.dirty {
		if _, ok := q.processing[item]; ok {
			both++
		} else {
			require.True(t, inQueue[item], "%v is dirty, not processing, and not in the queue", item)
		}
	}
	require.Equal(t, both, q.dirtyProcessing, "dirtyProcessing")
}
