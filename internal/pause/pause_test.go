package pause

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestForWaitsTheWholeDurationUnlessTheContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		assert.True(t, For(t.Context(), 3*time.Second))
		assert.Equal(t, 3*time.Second, time.Since(start))

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start = time.Now()
		assert.False(t, For(ctx, time.Hour), "the context ended first")
		assert.Equal(t, time.Second, time.Since(start), "returned when it ended, not after the hour")

		assert.False(t, For(ctx, 0), "an ended context is never a completed wait")
	})
}
