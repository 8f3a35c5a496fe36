package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kubeinternals/informers/trace"
)

// JitterFactor stretches each wait between two attempts to acquire the lease: a
// candidate waits RetryPeriod plus a random part of up to JitterFactor·RetryPeriod, so
// that candidates started together do not keep asking in step.
//
// client-go: tools/leaderelection/leaderelection.go JitterFactor
const JitterFactor = 1.2

// The defaults of a zero Config, the ones kube-controller-manager, kube-scheduler and
// controller-runtime use.
//
// component-base: config/v1alpha1/defaults.go RecommendedDefaultLeaderElectionConfiguration
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// ErrInvalidConfig is wrapped by every error New and NewLeaseLock return for bad input.
var ErrInvalidConfig = errors.New("leaderelection: invalid config")

// Config says what to compete for and what to do when leading.
//
// client-go: tools/leaderelection/leaderelection.go LeaderElectionConfig
type Config struct {
	// Lock is the object the candidates compete for, usually a LeaseLock. Required.
	Lock Lock

	// LeaseDuration is how long the other candidates wait, after they last saw the
	// Lease change, before they take it over: the longest a crashed leader leaves the
	// work undone. Zero means DefaultLeaseDuration (15s).
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps trying to renew before it gives up
	// leading. It must be shorter than LeaseDuration, so that a leader cut off from the
	// apiserver stops working before another candidate may start. Zero means
	// DefaultRenewDeadline (10s).
	RenewDeadline time.Duration
	// RetryPeriod is the pause between two attempts (to acquire: stretched by
	// JitterFactor; to renew: exact). RenewDeadline must exceed
	// JitterFactor·RetryPeriod. Zero means DefaultRetryPeriod (2s).
	RetryPeriod time.Duration

	// Callbacks say what to do when leading starts and stops.
	Callbacks Callbacks

	// ReleaseOnCancel clears the Lease's holder when Run stops leading — after a
	// graceful stop and after a lost lease alike — so the next candidate takes over at
	// its next attempt instead of after LeaseDuration. Only safe if the work has
	// stopped by then: Run waits for OnStartedLeading to return first. After a loss
	// the Lease usually names another holder already, and the release writes nothing
	// (it writes only over a Lease that still names this candidate).
	ReleaseOnCancel bool

	// Name names this election in logs; "" means the Lock's Describe().
	Name string

	// Logger receives the election's log lines; nil means slog.Default().
	Logger *slog.Logger
	// Tracer, if not nil, receives an event for every attempt, acquisition,
	// renewal, loss, release and observed new leader (trace.LeaderElection).
	Tracer *trace.Tracer
	// MetricsProvider, if not nil, receives the election's metrics (whether this
	// candidate leads, slow-path renewals, the Lease's transitions, renewal
	// latency, writes the gate refused), named Name.
	MetricsProvider MetricsProvider
}

// Callbacks are the election's hooks.
//
// client-go: tools/leaderelection/leaderelection.go LeaderCallbacks
type Callbacks struct {
	// OnStartedLeading runs in its own goroutine once the lease is acquired. Its
	// context ends at the first of two signals:
	//
	//   - a graceful stop (Run's context ended; the cause is Run's context's cause):
	//     take no new work, finish what is in hand, return. The elector keeps
	//     renewing meanwhile, so no other replica starts;
	//   - a lost lease (the cause wraps ErrLeaseLost): stop at once.
	//
	// A loss during the drain cannot change the cause a second time: it ends
	// LeaseContext(ctx) instead. Work that drains must run its requests under
	// LeaseContext(ctx) and stop draining when it ends. Run waits for
	// OnStartedLeading to return before it releases the Lease or calls
	// OnStoppedLeading. Required.
	//
	// Returning while the context is live does not end the term (transition W1, as
	// in client-go): the lease stays renewed and the write gate open until Run's
	// context ends or the lease is lost, so `go mgr.Start(ctx); return` keeps
	// leading. Pitfall: Run cannot wait for work left in such a goroutine; at a
	// graceful stop it releases the Lease as soon as the context has ended.
	OnStartedLeading func(ctx context.Context)
	// OnStoppedLeading is called once when Run returns, whether or not this
	// candidate ever led (as client-go does). Optional.
	OnStoppedLeading func()
	// OnNewLeader is called with the holder's identity each time the candidate sees
	// the holder change, itself included, in order, on one goroutine that Run owns.
	// Optional.
	OnNewLeader func(identity string)
}

// withDefaults fills the zero durations and checks the rest.
//
// client-go: tools/leaderelection/leaderelection.go NewLeaderElector
func (c Config) withDefaults() (Config, error) {
	if c.LeaseDuration == 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.RenewDeadline == 0 {
		c.RenewDeadline = DefaultRenewDeadline
	}
	if c.RetryPeriod == 0 {
		c.RetryPeriod = DefaultRetryPeriod
	}
	switch {
	case c.LeaseDuration < 0 || c.RenewDeadline < 0 || c.RetryPeriod < 0:
		return c, fmt.Errorf("%w: negative duration (LeaseDuration %v, RenewDeadline %v, RetryPeriod %v)",
			ErrInvalidConfig, c.LeaseDuration, c.RenewDeadline, c.RetryPeriod)
	case c.LeaseDuration <= c.RenewDeadline:
		return c, fmt.Errorf("%w: LeaseDuration (%v) must be longer than RenewDeadline (%v), or a leader cut off from the apiserver could still be working when another takes over",
			ErrInvalidConfig, c.LeaseDuration, c.RenewDeadline)
	case c.RenewDeadline <= time.Duration(JitterFactor*float64(c.RetryPeriod)):
		return c, fmt.Errorf("%w: RenewDeadline (%v) must be longer than JitterFactor×RetryPeriod (%v×%v)",
			ErrInvalidConfig, c.RenewDeadline, JitterFactor, c.RetryPeriod)
	case c.LeaseDuration%time.Second != 0:
		// Why: the Lease stores whole seconds; 1.5s would be written as 1s and the
		// others would take over half a second early.
		return c, fmt.Errorf("%w: LeaseDuration (%v) must be whole seconds: the Lease stores seconds",
			ErrInvalidConfig, c.LeaseDuration)
	case c.Callbacks.OnStartedLeading == nil:
		return c, fmt.Errorf("%w: Callbacks.OnStartedLeading is required", ErrInvalidConfig)
	case c.Lock == nil:
		return c, fmt.Errorf("%w: Lock is required", ErrInvalidConfig)
	case c.Lock.Identity() == "":
		return c, fmt.Errorf("%w: the Lock's identity is empty", ErrInvalidConfig)
	}
	if c.Name == "" {
		c.Name = c.Lock.Describe()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}
