// Package pause waits for a duration unless a context ends first: the one timed wait
// the reflector's backoff, the leader elector's retries and the lab's experiments share.
package pause

import (
	"context"
	"time"
)

// For waits d, or until ctx ends; it reports whether the whole of d passed with ctx
// still live.
//
// Why a timer, not time.After: a context that ends first stops the timer at once
// instead of leaving it to fire later.
func For(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return ctx.Err() == nil
	}
}
