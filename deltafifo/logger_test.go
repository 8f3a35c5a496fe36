package deltafifo

import (
	"fmt"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestWithoutALoggerSlowHandlersAreReportedToSlogDefault(t *testing.T) {
	for _, kind := range []string{"DeltaFIFO", "RealFIFO"} {
		t.Run(kind, func(t *testing.T) {
			var logs logBuffer
			prev := slog.Default()
			slog.SetDefault(testLogger(&logs))
			t.Cleanup(func() { slog.SetDefault(prev) })
			synctest.Test(t, func(t *testing.T) {
				var q Queue[*corev1.ConfigMap]
				if kind == "DeltaFIFO" {
					q = NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{})
				} else {
					q = NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
				}
				for i := range 12 {
					require.NoError(t, q.Add(cm("ns", fmt.Sprint("o", i), "1")))
				}
				require.NoError(t, q.Pop(t.Context(), func(Deltas[*corev1.ConfigMap], bool) error {
					time.Sleep(150 * time.Millisecond) // fake time inside the bubble
					return nil
				}))
			})
			assert.Contains(t, logs.String(), "slow event handlers", "a nil Logger means slog.Default()")
		})
	}
}
