package deltafifo

import (
	"context"
	"strconv"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// batches pops with PopBatch until the queue is empty.
func batches(t *testing.T, f *RealFIFO[*corev1.ConfigMap]) (got [][]string, initial []bool) {
	t.Helper()
	for queueLen(f) > 0 {
		require.NoError(t, f.PopBatch(t.Context(), func(b []Delta[*corev1.ConfigMap], isInInitialList bool) error {
			got = append(got, summary(b))
			initial = append(initial, isInInitialList)
			return nil
		}))
	}
	return got, initial
}

func TestRealFIFOPopBatch(t *testing.T) {
	add := func(name string) func(f *RealFIFO[*corev1.ConfigMap]) {
		return func(f *RealFIFO[*corev1.ConfigMap]) { require.NoError(t, f.Add(cm("ns", name, "1"))) }
	}
	upd := func(name string) func(f *RealFIFO[*corev1.ConfigMap]) {
		return func(f *RealFIFO[*corev1.ConfigMap]) { require.NoError(t, f.Update(cm("ns", name, "2"))) }
	}
	resync := func(f *RealFIFO[*corev1.ConfigMap]) { require.NoError(t, f.Resync()) }
	bookmark := func(f *RealFIFO[*corev1.ConfigMap]) { require.NoError(t, f.Bookmark("5")) }
	replace := func(f *RealFIFO[*corev1.ConfigMap]) { require.NoError(t, f.Replace(cmList{cm("ns", "r", "1")}, "4")) }

	tests := []struct {
		name        string
		batchSize   int
		ops         []func(f *RealFIFO[*corev1.ConfigMap])
		want        [][]string
		wantInitial []bool
	}{
		{
			name:      "a batch holds at most the batch size",
			batchSize: 3,
			ops:       []func(f *RealFIFO[*corev1.ConfigMap]){add("a"), add("b"), add("c"), add("d"), add("e")},
			want: [][]string{
				{"Added:ns/a@1", "Added:ns/b@1", "Added:ns/c@1"},
				{"Added:ns/d@1", "Added:ns/e@1"},
			},
			wantInitial: []bool{false, false},
		},
		{
			name:      "a batch ends before a second delta for a key already in it",
			batchSize: 10,
			ops:       []func(f *RealFIFO[*corev1.ConfigMap]){add("a"), add("b"), upd("a"), add("c")},
			want: [][]string{
				{"Added:ns/a@1", "Added:ns/b@1"},
				{"Updated:ns/a@2", "Added:ns/c@1"},
			},
			wantInitial: []bool{false, false},
		},
		{
			name:      "a whole-list delta ends the batch before it and is popped alone",
			batchSize: 10,
			ops:       []func(f *RealFIFO[*corev1.ConfigMap]){add("a"), add("b"), resync, bookmark, add("c")},
			want: [][]string{
				{"Added:ns/a@1", "Added:ns/b@1"},
				{"SyncAll"},
				{"Bookmark@5"},
				{"Added:ns/c@1"},
			},
			wantInitial: []bool{false, false, false, false},
		},
		{
			name:      "the initial list is popped apart from the events after it",
			batchSize: 10,
			ops:       []func(f *RealFIFO[*corev1.ConfigMap]){bookmark, replace, add("a"), add("b")},
			want: [][]string{
				{"Bookmark@5"},
				{"ReplacedAll@4[ns/r]"},
				{"Added:ns/a@1", "Added:ns/b@1"},
			},
			wantInitial: []bool{true, true, false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{EmitBookmark: true})
			f.batchSize = tt.batchSize
			for _, op := range tt.ops {
				op(f)
			}
			got, initial := batches(t, f)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantInitial, initial)
		})
	}
	t.Run("the default batch size is 1000", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
		for i := range 1001 {
			require.NoError(t, f.Add(cm("ns", strconv.Itoa(i), "1")))
		}
		var sizes []int
		for queueLen(f) > 0 {
			require.NoError(t, f.PopBatch(t.Context(), func(b []Delta[*corev1.ConfigMap], _ bool) error {
				sizes = append(sizes, len(b))
				return nil
			}))
		}
		assert.Equal(t, []int{1000, 1}, sizes)
	})
	t.Run("PopBatch returns the process func's error", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
		require.NoError(t, f.Add(cm("ns", "a", "1")))
		require.ErrorIs(t, f.PopBatch(t.Context(), func([]Delta[*corev1.ConfigMap], bool) error { return errBoom }), errBoom)
	})
	t.Run("PopBatch with a nil process func is an error, not a panic", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
		require.NoError(t, f.Add(cm("ns", "a", "1")))
		require.Error(t, f.PopBatch(t.Context(), nil))
	})
	t.Run("PopBatch returns ErrClosed on a closed, empty queue", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
		f.Close()
		require.ErrorIs(t, f.PopBatch(t.Context(), func([]Delta[*corev1.ConfigMap], bool) error { return nil }), ErrClosed)
	})
	t.Run("HasSynced turns true only after the initial list's batch is processed", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
		require.NoError(t, f.Replace(cmList{cm("ns", "a", "1")}, "1"))
		require.NoError(t, f.PopBatch(t.Context(), func([]Delta[*corev1.ConfigMap], bool) error {
			assert.False(t, f.HasSynced())
			return nil
		}))
		assert.True(t, f.HasSynced())
	})
}

func TestRealFIFOUnlocksWhileProcessing(t *testing.T) {
	lockFreeDuringProcess := func(f *RealFIFO[*corev1.ConfigMap]) bool {
		var free bool
		require.NoError(t, f.Pop(t.Context(), func(Deltas[*corev1.ConfigMap], bool) error {
			if free = f.mu.TryLock(); free {
				f.mu.Unlock()
			}
			return nil
		}))
		return free
	}
	t.Run("process runs without the lock while fewer than two batches are queued", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
		f.batchSize = 2
		for _, n := range []string{"a", "b", "c", "d"} {
			require.NoError(t, f.Add(cm("ns", n, "1")))
		}
		assert.True(t, lockFreeDuringProcess(f), "3 left after the pop")
	})
	t.Run("process holds the lock once two batches are queued, so the producer waits", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
		f.batchSize = 2
		for _, n := range []string{"a", "b", "c", "d", "e"} {
			require.NoError(t, f.Add(cm("ns", n, "1")))
		}
		assert.False(t, lockFreeDuringProcess(f), "4 left after the pop")
	})
	t.Run("concurrent Pops process one at a time, in queue order", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
			require.NoError(t, f.Add(cm("ns", "a", "1")))
			require.NoError(t, f.Add(cm("ns", "b", "1")))
			release := make(chan struct{})
			order := make(chan string, 2)
			done := make(chan error, 2)
			go func() { // owner: this test; exits when release is closed
				done <- f.Pop(context.Background(), func(d Deltas[*corev1.ConfigMap], _ bool) error {
					order <- key(d[0].Object)
					<-release
					return nil
				})
			}()
			synctest.Wait() // the first Pop is inside process, without the lock
			go func() {     // owner: this test; exits after its Pop
				done <- f.Pop(context.Background(), func(d Deltas[*corev1.ConfigMap], _ bool) error {
					order <- key(d[0].Object)
					return nil
				})
			}()
			synctest.Wait()
			require.Len(t, order, 1, "the second Pop ran process while the first was still running")
			close(release)
			require.NoError(t, <-done)
			require.NoError(t, <-done)
			assert.Equal(t, "ns/a", <-order)
			assert.Equal(t, "ns/b", <-order)
		})
	})
	t.Run("the lock is taken back if process panics", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
		require.NoError(t, f.Add(cm("ns", "a", "1")))
		require.NoError(t, f.Add(cm("ns", "b", "1")))
		assert.Panics(t, func() {
			_ = f.Pop(t.Context(), func(Deltas[*corev1.ConfigMap], bool) error { panic("handler bug") })
		})
		assert.Equal(t, [][]string{{"Added:ns/b@1"}}, summaries(popAll(t, f)), "the queue still works")
	})
}
