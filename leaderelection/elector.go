package leaderelection

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// ErrLeaseLost is wrapped by Run's error when the leader could not renew the lease
// within RenewDeadline and stopped leading.
var ErrLeaseLost = errors.New("leaderelection: lost the lease")

// Elector runs one candidate's side of a leader election: it tries to acquire the
// Lock, renews it while leading, and stops leading when it cannot renew in time.
//
// Invariant: leadership is decided on this candidate's own clock. Another holder's
// lease counts as expired once LeaseDurationSeconds have passed, measured with
// time.Now here, since this candidate last saw the Lease change — never by comparing
// the holder's RenewTime with our clock.
// Why: the candidates' clocks may disagree by more than a lease duration; with the
// holder's timestamps, a candidate whose clock runs ahead would take over from a live
// leader. What all candidates do share is the apiserver's resourceVersion check on
// the Lease's updates.
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector
type Elector struct {
	cfg Config
	log *slog.Logger
	// jitter returns a number in [0, 1) for the acquire loop's wait; rand.Float64
	// except in tests.
	jitter func() float64
	// metrics are set by New and never changed.
	metrics electionMetrics
	// term is the current term of leading while this candidate leads, nil otherwise:
	// the write gate's state. Run sets it when the lease is acquired and clears it at
	// a loss or when the work has returned, before the release.
	term atomic.Pointer[leadership]

	mu sync.RWMutex
	// observed is the record as last read from or written to the Lock. Guarded by mu.
	observed Record
	// observedAt is when (this candidate's clock) observed last changed; for its own
	// writes, when the writing attempt began. Guarded by mu.
	observedAt time.Time
}

// New checks cfg, fills its zero durations with the defaults (15s, 10s, 2s) and returns
// an Elector ready to Run.
//
// client-go: tools/leaderelection/leaderelection.go NewLeaderElector
func New(cfg Config) (*Elector, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Elector{
		cfg:     cfg,
		log:     cfg.Logger.With("lease", cfg.Name, "identity", cfg.Lock.Identity()),
		jitter:  rand.Float64,
		metrics: newElectionMetrics(cfg.MetricsProvider, cfg.Name),
	}
	e.metrics.leader.Set(0)
	return e, nil
}

// Identity is this candidate's name.
func (e *Elector) Identity() string { return e.cfg.Lock.Identity() }

// Leader is the holder of the lease as this candidate last saw it; "" if none.
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.GetLeader
func (e *Elector) Leader() string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.observed.Holder
}

// IsLeader reports whether this candidate held the lease when it last looked.
//
// Pitfall: it is the last observation, not a guarantee: a leader paused for longer
// than its lease still answers true when it wakes up, until its next renewal fails.
// Leader-only work should follow OnStartedLeading's context instead.
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.IsLeader
func (e *Elector) IsLeader() bool {
	return e.Leader() == e.Identity()
}

// Check is a health check: it fails when this candidate believes it leads but has not
// renewed the lease for longer than LeaseDuration plus tolerance — a leader stuck
// somewhere, whose process a liveness probe should restart. A candidate that does not
// lead is healthy.
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.Check, healthzadaptor.go HealthzAdaptor
func (e *Elector) Check(tolerance time.Duration) error {
	e.mu.RLock()
	leading := e.observed.Holder == e.Identity()
	since := time.Since(e.observedAt)
	e.mu.RUnlock()
	if leading && since > e.cfg.LeaseDuration+tolerance {
		return fmt.Errorf("leaderelection: %s: leading but the lease was last renewed %v ago (lease duration %v + tolerance %v)",
			e.cfg.Name, since.Round(time.Millisecond), e.cfg.LeaseDuration, tolerance)
	}
	return nil
}

// observe records r as the Lease's current state, seen now.
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.setObservedRecord
func (e *Elector) observe(r Record) { e.observeAt(r, time.Now()) }

// observeAt records r as the Lease's state since at. For this candidate's own writes
// at is when the attempt began, not when the answer came: the lease it holds is
// counted from before any other candidate could have seen the write.
func (e *Elector) observeAt(r Record, at time.Time) {
	e.mu.Lock()
	e.observed, e.observedAt = r, at
	e.mu.Unlock()
	e.metrics.transitions.Set(float64(r.Transitions))
}

// observedRecord is the last record seen.
func (e *Elector) observedRecord() Record {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.observed
}

// validAt reports whether the observed lease has not expired at now: now is before
// observedAt plus the record's own LeaseDurationSeconds (the holder's setting, not
// ours).
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.isLeaseValid
func (e *Elector) validAt(now time.Time) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.observedAt.Add(time.Duration(e.observed.LeaseDurationSeconds) * time.Second).After(now)
}
