package incluster

import (
	"context"
	"fmt"
	"time"
)

// poll calls cond every 50ms until it reports done, ctx ends or within passes; the error
// then says what was awaited and carries cond's last error.
func poll(ctx context.Context, within time.Duration, what string, cond func() (done bool, err error)) error {
	deadline := time.Now().Add(within)
	for {
		done, err := cond()
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not after %s (last error: %v)", what, within, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
