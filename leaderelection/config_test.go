package leaderelection

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

func TestNewRejectsAConfigThatCouldMakeTwoLeaders(t *testing.T) {
	lock := newLeaseStore().lock("a")
	work := func(context.Context) {}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"a lease no longer than the renew deadline", Config{Lock: lock, LeaseDuration: 10 * time.Second, Callbacks: Callbacks{OnStartedLeading: work}},
			"LeaseDuration (10s) must be longer than RenewDeadline (10s)"},
		{"a renew deadline that leaves no room for a retry", Config{Lock: lock, RenewDeadline: 2 * time.Second, Callbacks: Callbacks{OnStartedLeading: work}},
			"RenewDeadline (2s) must be longer than JitterFactor×RetryPeriod (1.2×2s)"},
		{"a negative duration", Config{Lock: lock, RetryPeriod: -time.Second, Callbacks: Callbacks{OnStartedLeading: work}},
			"negative duration"},
		{"a lease of a fraction of a second", Config{Lock: lock, LeaseDuration: 1500 * time.Millisecond, RenewDeadline: time.Second, RetryPeriod: 100 * time.Millisecond, Callbacks: Callbacks{OnStartedLeading: work}},
			"must be whole seconds"},
		{"no work to do when leading", Config{Lock: lock}, "Callbacks.OnStartedLeading is required"},
		{"no lock", Config{Callbacks: Callbacks{OnStartedLeading: work}}, "Lock is required"},
		{"a lock without an identity", Config{Lock: newLeaseStore().lock(""), Callbacks: Callbacks{OnStartedLeading: work}}, "identity is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			require.ErrorIs(t, err, ErrInvalidConfig)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestAZeroConfigGetsTheDefaultsOfKubeControllerManager(t *testing.T) {
	e, err := New(Config{Lock: newLeaseStore().lock("a"), Callbacks: Callbacks{OnStartedLeading: func(context.Context) {}}})
	require.NoError(t, err)
	assert.Equal(t, 15*time.Second, e.cfg.LeaseDuration)
	assert.Equal(t, 10*time.Second, e.cfg.RenewDeadline)
	assert.Equal(t, 2*time.Second, e.cfg.RetryPeriod)
	assert.Equal(t, "default/lease", e.cfg.Name)
	assert.Equal(t, "a", e.Identity())
}

func TestNewLeaseLockNamesWhatIsMissing(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	for _, tc := range []struct {
		name string
		cfg  *rest.Config
		opts LeaseLockOptions
		want string
	}{
		{"no config", nil, LeaseLockOptions{Namespace: "ns", Name: "n", Identity: "a"}, "nil rest.Config"},
		{"no name", cfg, LeaseLockOptions{Namespace: "ns", Identity: "a"}, `needs a namespace and a name (got "ns"/"")`},
		{"no identity", cfg, LeaseLockOptions{Namespace: "ns", Name: "n"}, "empty identity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewLeaseLock(tc.cfg, tc.opts)
			require.ErrorIs(t, err, ErrInvalidConfig)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	l, err := NewLeaseLock(cfg, LeaseLockOptions{Namespace: "ns", Name: "n", Identity: "a"})
	require.NoError(t, err)
	assert.Equal(t, "ns/n", l.Describe())
	assert.ErrorIs(t, l.Update(t.Context(), Record{}), errNotRead, "an Update needs a version to write over")
}

func TestRunWarnsWhileTheLeaderWorkIgnoresItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		s := newLeaseStore()
		cfg := testConfig(s.lock("a"))
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		a := run(t, time.Now(), cfg, 0, 25*time.Second) // the work lingers 25s after its context ended
		time.Sleep(time.Second)
		a.cancel()
		time.Sleep(21 * time.Second)
		synctest.Wait()
		assert.Equal(t, 2, bytes.Count(logs.Bytes(), []byte("OnStartedLeading has not returned")),
			"one warning per RenewDeadline (10s) of waiting")
		<-a.done
		_, _, stopped, _, _ := a.snapshot()
		assert.Equal(t, 1, stopped, "OnStoppedLeading only after the work returned")
	})
}

func TestOnNewLeaderSeesEveryChangeOfHolderInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, s := time.Now(), newLeaseStore()
		s.set(Record{Holder: "x", LeaseDurationSeconds: 15, AcquireTime: t0, RenewTime: t0})
		b := run(t, t0, testConfig(s.lock("b")), 0, 0)
		time.Sleep(3 * time.Second)
		s.set(Record{Holder: "y", LeaseDurationSeconds: 15, AcquireTime: time.Now(), RenewTime: time.Now(), Transitions: 1})
		time.Sleep(3 * time.Second)
		now := time.Now()
		s.set(Record{LeaseDurationSeconds: 1, AcquireTime: now, RenewTime: now, Transitions: 1}) // y released it
		time.Sleep(3 * time.Second)
		synctest.Wait()
		_, _, _, leaders, _ := b.snapshot()
		assert.Equal(t, []string{"x", "y", "b"}, leaders,
			"b read y's release and took the lease in the same try: it reports only the holder after the try")
	})
}
