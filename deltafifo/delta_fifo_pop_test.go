package deltafifo

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestDeltaFIFOPopHoldsTheLock(t *testing.T) {
	t.Run("process runs with the queue's lock held", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{})
		require.NoError(t, f.Add(cm("ns", "a", "1")))
		require.NoError(t, f.Pop(t.Context(), func(Deltas[*corev1.ConfigMap], bool) error {
			if f.mu.TryLock() {
				f.mu.Unlock()
				t.Error("the lock was free while process ran")
			}
			return nil
		}))
	})
}

func TestSlowProcessingIsLogged(t *testing.T) {
	// Inside a synctest bubble time is fake: the Sleep below advances the bubble's
	// clock instantly once every goroutine is blocked; no real time passes.
	slow := func(d time.Duration) func() error {
		return func() error { time.Sleep(d); return nil }
	}
	tests := []struct {
		name    string
		queued  int // objects queued before the pop
		handler func() error
		wantLog bool
	}{
		{"a slow handler on a deep queue is logged", 12, slow(150 * time.Millisecond), true},
		{"a fast handler on a deep queue is not logged", 12, slow(50 * time.Millisecond), false},
		{"a slow handler on a shallow queue is not logged", 5, slow(150 * time.Millisecond), false},
	}
	for _, kind := range []string{"DeltaFIFO", "RealFIFO"} {
		for _, tt := range tests {
			t.Run(kind+": "+tt.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var logs logBuffer
					var q Queue[*corev1.ConfigMap]
					if kind == "DeltaFIFO" {
						q = NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{Logger: testLogger(&logs)})
					} else {
						q = NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{Logger: testLogger(&logs)})
					}
					for i := range tt.queued {
						require.NoError(t, q.Add(cm("ns", fmt.Sprint("o", i), "1")))
					}
					require.NoError(t, q.Pop(t.Context(), func(Deltas[*corev1.ConfigMap], bool) error { return tt.handler() }))
					if tt.wantLog {
						assert.Contains(t, logs.String(), "slow event handlers")
						assert.Contains(t, logs.String(), "key=ns/o0")
					} else {
						assert.Empty(t, logs.String())
					}
				})
			})
		}
	}
}
