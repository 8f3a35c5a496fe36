package deltafifo

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// queueKinds runs the Queue contract against both implementations.
var queueKinds = []struct {
	name string
	new  func() Queue[*corev1.ConfigMap]
}{
	{"DeltaFIFO", func() Queue[*corev1.ConfigMap] {
		return NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{})
	}},
	{"RealFIFO", func() Queue[*corev1.ConfigMap] {
		return NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
	}},
}

func TestQueuePop(t *testing.T) {
	for _, kind := range queueKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Run("Pop hands out objects in the order they were first queued", func(t *testing.T) {
				q := kind.new()
				for _, n := range []string{"c", "a", "b"} {
					require.NoError(t, q.Add(cm("ns", n, "1")))
				}
				assert.Equal(t, [][]string{{"Added:ns/c@1"}, {"Added:ns/a@1"}, {"Added:ns/b@1"}}, summaries(popAll(t, q)))
			})
			t.Run("Pop returns the process func's error and does not requeue", func(t *testing.T) {
				q := kind.new()
				require.NoError(t, q.Add(cm("ns", "a", "1")))
				err := q.Pop(t.Context(), func(Deltas[*corev1.ConfigMap], bool) error { return errBoom })
				require.ErrorIs(t, err, errBoom)
				assert.Zero(t, queueLen(q))
			})
			t.Run("Pop with a nil process func is an error, not a panic", func(t *testing.T) {
				q := kind.new()
				require.NoError(t, q.Add(cm("ns", "a", "1")))
				require.Error(t, q.Pop(t.Context(), nil))
				assert.Equal(t, 1, queueLen(q))
			})
			t.Run("Pop with a ctx already done pops nothing", func(t *testing.T) {
				q := kind.new()
				require.NoError(t, q.Add(cm("ns", "a", "1")))
				ctx, cancel := context.WithCancel(t.Context())
				cancel()
				require.ErrorIs(t, q.Pop(ctx, failIfCalled(t)), context.Canceled)
				assert.Equal(t, 1, queueLen(q))
			})
			t.Run("Pop blocks until something is queued", func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					q := kind.new()
					got := make(chan string, 1)
					go func() { // owner: this test; exits after one Pop
						_ = q.Pop(context.Background(), func(d Deltas[*corev1.ConfigMap], _ bool) error {
							got <- summary(d)[0]
							return nil
						})
					}()
					synctest.Wait()
					require.Empty(t, got, "Pop returned from an empty queue")
					require.NoError(t, q.Add(cm("ns", "a", "1")))
					synctest.Wait()
					assert.Equal(t, "Added:ns/a@1", <-got)
				})
			})
			t.Run("Pop returns ctx.Err when ctx ends while it waits, and leaves no goroutine behind", func(t *testing.T) {
				// synctest.Test fails if any goroutine of the bubble is still alive at the end.
				synctest.Test(t, func(t *testing.T) {
					q := kind.new()
					ctx, cancel := context.WithCancel(context.Background())
					errc := make(chan error, 1)
					go func() { errc <- q.Pop(ctx, failIfCalled(t)) }() // owner: this test; exits when ctx ends
					synctest.Wait()
					cancel()
					require.ErrorIs(t, <-errc, context.Canceled)
					// A Pop that found an item must not leave its ctx callback armed either.
					ctx2, cancel2 := context.WithCancel(context.Background())
					go func() { errc <- q.Pop(ctx2, func(Deltas[*corev1.ConfigMap], bool) error { return nil }) }() // owner: this test
					synctest.Wait()
					require.NoError(t, q.Add(cm("ns", "a", "1")))
					require.NoError(t, <-errc)
					cancel2()
					synctest.Wait()
				})
			})
			t.Run("Close wakes a waiting Pop, which returns ErrClosed", func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					q := kind.new()
					errc := make(chan error, 1)
					go func() { errc <- q.Pop(context.Background(), failIfCalled(t)) }() // owner: this test; exits on Close
					synctest.Wait()
					q.Close()
					err := <-errc
					require.ErrorIs(t, err, ErrClosed)
				})
			})
			t.Run("Pop still hands out what was queued before Close, then returns ErrClosed", func(t *testing.T) {
				q := kind.new()
				require.NoError(t, q.Add(cm("ns", "a", "1")))
				q.Close()
				q.Close() // a second Close is harmless
				assert.Equal(t, "Added:ns/a@1", summary(popOne(t, q).deltas)[0])
				err := q.Pop(t.Context(), failIfCalled(t))
				require.ErrorIs(t, err, ErrClosed)
				assert.True(t, errors.Is(err, ErrClosed) && err.Error() != ErrClosed.Error(), "the error names the queue")
			})
		})
	}
}

func failIfCalled(t *testing.T) PopProcessFunc[*corev1.ConfigMap] {
	return func(Deltas[*corev1.ConfigMap], bool) error {
		t.Error("process was called")
		return nil
	}
}

func TestQueueHasSynced(t *testing.T) {
	for _, kind := range queueKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Run("a new queue has not synced", func(t *testing.T) {
				q := kind.new()
				assert.False(t, q.HasSynced())
				assertOpen(t, q.Synced())
			})
			for _, ev := range []struct {
				name string
				op   func(Queue[*corev1.ConfigMap]) error
			}{
				{"an Add", func(q Queue[*corev1.ConfigMap]) error { return q.Add(cm("ns", "a", "1")) }},
				{"an Update", func(q Queue[*corev1.ConfigMap]) error { return q.Update(cm("ns", "a", "1")) }},
				{"a Delete (even a dropped one)", func(q Queue[*corev1.ConfigMap]) error { return q.Delete(cm("ns", "a", "1")) }},
			} {
				t.Run(ev.name+" before any Replace syncs the queue at once", func(t *testing.T) {
					q := kind.new()
					require.NoError(t, ev.op(q))
					assert.True(t, q.HasSynced())
					assertClosed(t, q.Synced())
					require.NoError(t, q.Replace([]*corev1.ConfigMap{cm("ns", "b", "1")}, "1"))
					assert.True(t, q.HasSynced(), "a Replace after that does not unsync")
				})
			}
			t.Run("a Resync or a Bookmark before Replace does not sync the queue", func(t *testing.T) {
				q := kind.new()
				require.NoError(t, q.Resync())
				require.NoError(t, q.Bookmark("1"))
				assert.False(t, q.HasSynced())
			})
			t.Run("the first Replace syncs once all it queued is popped and processed", func(t *testing.T) {
				q := kind.new()
				require.NoError(t, q.Replace([]*corev1.ConfigMap{cm("ns", "a", "1"), cm("ns", "b", "1")}, "1"))
				require.NoError(t, q.Add(cm("ns", "c", "1")))
				var initial []bool
				for queueLen(q) > 0 {
					require.NoError(t, q.Pop(t.Context(), func(_ Deltas[*corev1.ConfigMap], isInInitialList bool) error {
						initial = append(initial, isInInitialList)
						if isInInitialList {
							assert.False(t, q.HasSynced(), "HasSynced turned true before the initial list was processed")
						}
						return nil
					}))
				}
				assert.True(t, q.HasSynced())
				assertClosed(t, q.Synced())
				require.NoError(t, q.Replace(nil, "2"))
				assert.True(t, q.HasSynced(), "a later Replace does not unsync")
				switch kind.name {
				case "DeltaFIFO": // a, b, then c
					assert.Equal(t, []bool{true, true, false}, initial)
				case "RealFIFO": // ReplacedAll{a, b}, then c
					assert.Equal(t, []bool{true, false}, initial)
				}
			})
		})
	}
}

// TestAnObjectDeletedAndCreatedAgainWhileItsFirstListKeyIsQueued: DeltaFIFO groups a
// delete and a re-create under the key the first Replace queued, and pops all three
// with the first list's flag, so the new object is handed over as initial. RealFIFO
// queues them behind the first list's ReplacedAll, flagged live.
func TestAnObjectDeletedAndCreatedAgainWhileItsFirstListKeyIsQueued(t *testing.T) {
	for _, kind := range queueKinds {
		t.Run(kind.name, func(t *testing.T) {
			q := kind.new()
			require.NoError(t, q.Replace([]*corev1.ConfigMap{cm("ns", "a", "1"), cm("ns", "b", "1")}, "1"))
			require.NoError(t, q.Delete(cm("ns", "b", "2")))
			require.NoError(t, q.Add(cm("ns", "b", "3")))
			type pop struct {
				types   []DeltaType
				initial bool
			}
			var pops []pop
			for queueLen(q) > 0 {
				require.NoError(t, q.Pop(t.Context(), func(d Deltas[*corev1.ConfigMap], isInInitialList bool) error {
					var types []DeltaType
					for _, delta := range d {
						types = append(types, delta.Type)
					}
					pops = append(pops, pop{types, isInInitialList})
					return nil
				}))
			}
			switch kind.name {
			case "DeltaFIFO":
				assert.Equal(t, []pop{
					{[]DeltaType{Replaced}, true},                 // a
					{[]DeltaType{Replaced, Deleted, Added}, true}, // b: the new b is "initial"
				}, pops)
			case "RealFIFO":
				assert.Equal(t, []pop{
					{[]DeltaType{ReplacedAll}, true},
					{[]DeltaType{Deleted}, false},
					{[]DeltaType{Added}, false},
				}, pops)
			}
		})
	}
}

func TestQueueEmptyFirstReplace(t *testing.T) {
	t.Run("a DeltaFIFO whose first Replace queues nothing syncs at once", func(t *testing.T) {
		q := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{})
		require.NoError(t, q.Replace(nil, "1"))
		assert.True(t, q.HasSynced())
	})
	t.Run("a DeltaFIFO counts the tombstones of its first Replace", func(t *testing.T) {
		q := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{KnownObjects: newKnown(cm("ns", "gone", "1"))})
		require.NoError(t, q.Replace(nil, "1"))
		assert.False(t, q.HasSynced())
		popOne(t, q)
		assert.True(t, q.HasSynced())
	})
	t.Run("a RealFIFO waits for even an empty list to be processed", func(t *testing.T) {
		q := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
		require.NoError(t, q.Replace(nil, "1"))
		assert.False(t, q.HasSynced(), "the ReplacedAll is the initial list")
		popOne(t, q)
		assert.True(t, q.HasSynced())
	})
}

func assertOpen(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
		t.Error("channel is closed")
	default:
	}
}

func assertClosed(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	default:
		t.Error("channel is not closed")
	}
}

// TestQueueOrderAcrossKeys shows the difference that made client-go move its
// informers to RealFIFO: the same events, in two orders.
func TestQueueOrderAcrossKeys(t *testing.T) {
	feed := func(q Queue[*corev1.ConfigMap]) {
		require.NoError(t, q.Add(cm("ns", "a", "1")))
		require.NoError(t, q.Add(cm("ns", "b", "2")))
		require.NoError(t, q.Delete(cm("ns", "a", "3")))
	}
	t.Run("DeltaFIFO delivers a's delete before b's add, which happened first", func(t *testing.T) {
		q := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{})
		feed(q)
		assert.Equal(t, [][]string{{"Added:ns/a@1", "Deleted:ns/a@3"}, {"Added:ns/b@2"}}, summaries(popAll(t, q)))
	})
	t.Run("RealFIFO delivers the events in the order they happened", func(t *testing.T) {
		q := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
		feed(q)
		assert.Equal(t, [][]string{{"Added:ns/a@1"}, {"Added:ns/b@2"}, {"Deleted:ns/a@3"}}, summaries(popAll(t, q)))
	})
}

func TestLenCountsWhatTheQueuedItemsMetricReports(t *testing.T) {
	fifo := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
	require.NoError(t, fifo.Add(cm("ns", "a", "1")))
	require.NoError(t, fifo.Update(cm("ns", "a", "2")))
	require.NoError(t, fifo.Replace([]*corev1.ConfigMap{cm("ns", "b", "3")}, "3"))
	assert.Equal(t, 3, fifo.Len(), "RealFIFO: one per event, a ReplacedAll once")

	d := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{})
	require.NoError(t, d.Add(cm("ns", "a", "1")))
	require.NoError(t, d.Update(cm("ns", "a", "2")))
	require.NoError(t, d.Add(cm("ns", "b", "3")))
	assert.Equal(t, 2, d.Len(), "DeltaFIFO: one per key with pending deltas")
}
