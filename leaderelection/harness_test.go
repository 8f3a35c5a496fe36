package leaderelection

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// candidate is one Elector running in a synctest bubble, with what its callbacks saw,
// in the bubble's time since the test began.
type candidate struct {
	e      *Elector
	cancel context.CancelFunc
	done   chan struct{}

	mu        sync.Mutex
	startedAt []time.Duration // OnStartedLeading calls, guarded by mu
	workEnded []time.Duration // when OnStartedLeading's context ended, guarded by mu
	causes    []error         // context.Cause of that context, guarded by mu
	returned  []time.Duration // when OnStartedLeading returned, guarded by mu
	stopped   int             // OnStoppedLeading calls, guarded by mu
	leaders   []string        // OnNewLeader calls, guarded by mu
	err       error           // Run's result, guarded by mu
}

// testConfig is the election's timing in these tests: client-go's defaults, and no
// jitter unless a test sets it.
func testConfig(lock Lock) Config {
	return Config{Lock: lock, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		Logger: slog.New(slog.DiscardHandler)}
}

// run starts a candidate with cfg (its callbacks are replaced by recording ones, and
// workFor makes OnStartedLeading drain that long after its context ended — like a
// controller finishing its queue — unless LeaseContext ends first: then it returns at
// once, as a worker told the lease is lost must). jitter is the acquire loop's random
// number. t0 is the test's start.
func run(t *testing.T, t0 time.Time, cfg Config, jitter float64, workFor time.Duration) *candidate {
	t.Helper()
	c := &candidate{done: make(chan struct{})}
	since := func() time.Duration { return time.Since(t0) }
	cfg.Callbacks = Callbacks{
		OnStartedLeading: func(ctx context.Context) {
			c.mu.Lock()
			c.startedAt = append(c.startedAt, since())
			c.mu.Unlock()
			<-ctx.Done()
			c.mu.Lock()
			c.workEnded = append(c.workEnded, since())
			c.causes = append(c.causes, context.Cause(ctx))
			c.mu.Unlock()
			drained := time.NewTimer(workFor)
			defer drained.Stop()
			select {
			case <-drained.C:
			case <-LeaseContext(ctx).Done():
			}
			c.mu.Lock()
			c.returned = append(c.returned, since())
			c.mu.Unlock()
		},
		OnStoppedLeading: func() { c.mu.Lock(); c.stopped++; c.mu.Unlock() },
		OnNewLeader:      func(id string) { c.mu.Lock(); c.leaders = append(c.leaders, id); c.mu.Unlock() },
	}
	e, err := New(cfg)
	require.NoError(t, err)
	e.jitter = func() float64 { return jitter }
	c.e = e
	ctx, cancel := context.WithCancel(t.Context())
	c.cancel = cancel
	go func() {
		defer close(c.done)
		err := e.Run(ctx)
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
	}()
	t.Cleanup(func() { cancel(); <-c.done })
	return c
}

// stop cancels the candidate's context and waits for Run to return: a graceful stop.
func (c *candidate) stop() {
	c.cancel()
	<-c.done
}

func (c *candidate) snapshot() (started, ended []time.Duration, stopped int, leaders []string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.startedAt...), append([]time.Duration(nil), c.workEnded...),
		c.stopped, append([]string(nil), c.leaders...), c.err
}

// workReturned lists when OnStartedLeading returned.
func (c *candidate) workReturned() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.returned...)
}

func (c *candidate) workCauses() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]error(nil), c.causes...)
}

// writesBy lists the offsets (since t0) of the store's writes by id.
func writesBy(s *leaseStore, t0 time.Time, id string) []time.Duration {
	var out []time.Duration
	for _, w := range s.history() {
		if w.by == id {
			out = append(out, w.at.Sub(t0))
		}
	}
	return out
}

// seconds turns whole and fractional seconds into durations, for readable wants.
func seconds(xs ...float64) []time.Duration {
	out := make([]time.Duration, len(xs))
	for i, x := range xs {
		out[i] = time.Duration(x * float64(time.Second))
	}
	return out
}
