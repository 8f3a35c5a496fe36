package controller

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

// TestTheWorkersHonourBothSignalsOfLeaderElection drives runWorkers with the two
// contexts leaderelection hands OnStartedLeading: ctx (the first signal: stop taking
// work) and must (LeaseContext: stop at once). As there, ctx is derived from must: a
// loss ends both. A worker holds a key whose sync takes 10s unless its context ends.
func TestTheWorkersHonourBothSignalsOfLeaderElection(t *testing.T) {
	lost := errors.New("leaderelection: lost the lease (test)")
	for _, tc := range []struct {
		name string
		// stopAt ends ctx alone; loseAt ends must, and so ctx (0: never).
		stopAt, loseAt time.Duration
		// returnedAt is when runWorkers returns; syncEnded when the sync in hand ended.
		returnedAt, syncEnded time.Duration
		log                   string
	}{
		{"a graceful stop lets the sync in hand finish", time.Second, 0, 10 * time.Second, 10 * time.Second,
			"letting workers finish"},
		{"a lease lost during the drain ends the sync in hand at once", time.Second, 3 * time.Second, 3 * time.Second, 3 * time.Second,
			"leadership lost while draining: stopping workers at once"},
		{"a lease lost while working: no drain at all", 0, 1500 * time.Millisecond, 1500 * time.Millisecond, 1500 * time.Millisecond,
			"leadership lost: stopping workers at once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0 := time.Now()
				var mu sync.Mutex
				var syncEnded []time.Duration
				var logs bytes.Buffer
				c, err := New(&rest.Config{Host: "http://127.0.0.1:1"}, Options{
					Workers: 1, DrainTimeout: time.Minute, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
					Hooks: Hooks{BeforeSync: func(ctx context.Context, _ Key) error {
						select {
						case <-ctx.Done():
						case <-time.After(10 * time.Second):
						}
						mu.Lock()
						syncEnded = append(syncEnded, time.Since(t0))
						mu.Unlock()
						return ctx.Err()
					}},
				})
				require.NoError(t, err)
				c.queue.Add(Key{Namespace: "team-a", Name: "web"})

				must, lose := context.WithCancelCause(t.Context())
				ctx, stop := context.WithCancel(must)
				if tc.loseAt > 0 {
					time.AfterFunc(tc.loseAt, func() { lose(lost) })
				}
				if tc.stopAt > 0 {
					time.AfterFunc(tc.stopAt, stop)
				}
				c.runWorkers(ctx, must)

				assert.Equal(t, tc.returnedAt, time.Since(t0))
				mu.Lock()
				assert.Equal(t, []time.Duration{tc.syncEnded}, syncEnded)
				mu.Unlock()
				assert.Contains(t, logs.String(), tc.log)
				lose(nil)
				stop()
			})
		})
	}
}
