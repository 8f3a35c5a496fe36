package leaderelection_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
	"github.com/kubeinternals/informers/leaderelection"
)

func TestIntegrationALeaseUpdateOverAStaleVersionIsRefused(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx := t.Context()
	opts := leaderelection.LeaseLockOptions{Namespace: "default", Name: "race", Identity: "a", Labels: map[string]string{"app": "test"}}
	a, err := leaderelection.NewLeaseLock(env.Config, opts)
	require.NoError(t, err)
	opts.Identity = "b"
	b, err := leaderelection.NewLeaseLock(env.Config, opts)
	require.NoError(t, err)

	_, err = a.Get(ctx)
	require.True(t, apierrors.IsNotFound(err), "no Lease yet: %v", err)
	t0 := time.Now().Truncate(time.Microsecond)
	require.NoError(t, a.Create(ctx, leaderelection.Record{Holder: "a", LeaseDurationSeconds: 15, AcquireTime: t0, RenewTime: t0}))
	err = b.Create(ctx, leaderelection.Record{Holder: "b", LeaseDurationSeconds: 15, AcquireTime: t0, RenewTime: t0})
	assert.True(t, apierrors.IsAlreadyExists(err), "a Lease is created once, got %v", err)

	read, err := b.Get(ctx)
	require.NoError(t, err)
	assert.Equal(t, "a", read.Holder)
	assert.True(t, read.RenewTime.Equal(t0), "MicroTime keeps microseconds: %v vs %v", read.RenewTime, t0)

	renewed := t0.Add(1500 * time.Microsecond)
	require.NoError(t, a.Update(ctx, leaderelection.Record{Holder: "a", LeaseDurationSeconds: 15, AcquireTime: t0, RenewTime: renewed}),
		"a writes over its own last version")
	err = b.Update(ctx, leaderelection.Record{Holder: "b", LeaseDurationSeconds: 15, AcquireTime: t0, RenewTime: t0, Transitions: 1})
	assert.True(t, apierrors.IsConflict(err), "b read before a's renewal: its write names a stale resourceVersion and must get 409, got %v", err)

	read, err = b.Get(ctx)
	require.NoError(t, err)
	assert.Equal(t, "a", read.Holder, "a's renewal stands")
	assert.True(t, read.RenewTime.Equal(renewed), "a renewal 1.5ms later is a visible change")
	require.NoError(t, b.Update(ctx, leaderelection.Record{Holder: "b", LeaseDurationSeconds: 15, AcquireTime: t0, RenewTime: t0, Transitions: 1}),
		"after a fresh read, b's write goes through")
}

// leader records when a candidate's work ran.
type leader struct {
	mu         sync.Mutex
	start, end time.Time
}

func (l *leader) work(ctx context.Context) {
	l.mu.Lock()
	l.start = time.Now()
	l.mu.Unlock()
	<-ctx.Done()
	l.mu.Lock()
	l.end = time.Now()
	l.mu.Unlock()
}

func (l *leader) times() (time.Time, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.start, l.end
}

// candidate starts an Elector for identity on the Lease "handover" and returns its
// work record and a stop function that waits for Run.
func candidate(t *testing.T, env *testenv.Env, identity string, release bool) (*leader, func() error) {
	t.Helper()
	lock, err := leaderelection.NewLeaseLock(env.Config, leaderelection.LeaseLockOptions{Namespace: "default", Name: "handover", Identity: identity})
	require.NoError(t, err)
	l := &leader{}
	e, err := leaderelection.New(leaderelection.Config{
		Lock: lock, LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 250 * time.Millisecond,
		ReleaseOnCancel: release, Callbacks: leaderelection.Callbacks{OnStartedLeading: l.work},
		Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	var once sync.Once
	var err2 error
	stop := func() error {
		once.Do(func() { cancel(); err2 = <-done })
		return err2
	}
	t.Cleanup(func() { _ = stop() })
	return l, stop
}

func waitLeading(t *testing.T, l *leader, within time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if start, _ := l.times(); !start.IsZero() {
			return start
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no leadership within %v", within)
	return time.Time{}
}

func TestIntegrationCandidatesHandOverAndTakeOverOnARealAPIServer(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	a, stopA := candidate(t, env, "a", true)
	waitLeading(t, a, 10*time.Second)
	b, stopB := candidate(t, env, "b", false)

	time.Sleep(3 * time.Second) // longer than the lease: a keeps renewing it
	bStart, _ := b.times()
	assert.True(t, bStart.IsZero(), "while a renews, b does not lead")

	// A graceful handover: a releases the lease; b takes it at its next try.
	require.NoError(t, stopA())
	_, aEnd := a.times()
	bStart = waitLeading(t, b, 5*time.Second)
	handover := bStart.Sub(aEnd)
	t.Logf("graceful handover: %v after a's work stopped", handover)
	assert.Less(t, handover, 1500*time.Millisecond, "about one retry period (250ms + up to 300ms jitter), not a lease duration")

	// A crash: b stops without releasing; c must wait for the lease to expire.
	c, _ := candidate(t, env, "c", false)
	time.Sleep(3 * time.Second)
	cStart, _ := c.times()
	assert.True(t, cStart.IsZero(), "while b renews, c does not lead")
	require.NoError(t, stopB())
	_, bEnd := b.times()
	cStart = waitLeading(t, c, 10*time.Second)
	takeover := cStart.Sub(bEnd)
	t.Logf("takeover after a crash: %v", takeover)
	assert.Greater(t, takeover, 1500*time.Millisecond, "c waits for the lease (2s) to expire on its clock, less what had passed since b's last renewal")
	assert.Less(t, takeover, 4*time.Second, "within LeaseDuration + 2·RetryPeriod·(1+JitterFactor)")
}
