package leaderelection

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kubeinternals/informers/internal/pause"
)

// Run takes part in the election until ctx ends or leadership is lost:
//
//  1. acquire: try (A1–A4) until the lease is ours, waiting RetryPeriod plus up to
//     JitterFactor·RetryPeriod between two tries;
//  2. lead: start OnStartedLeading(leadCtx) in a goroutine, and renew (R1–R4) every
//     RetryPeriod until a renewal round fails for RenewDeadline (R4: lost) or ctx
//     ends (S1);
//  3. stop: end leadCtx and wait for OnStartedLeading to return; with
//     ReleaseOnCancel, clear the Lease's holder (S2); call OnStoppedLeading (S3).
//
// Run returns nil when ctx ended and an error wrapping ErrLeaseLost when the lease was
// lost; a controller usually exits on that error, as client-go's callers exit in
// OnStoppedLeading. Run may be called again after it returns, not concurrently.
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.Run
func (e *Elector) Run(ctx context.Context) (err error) {
	// Transition S3: OnStoppedLeading runs whenever Run returns, led or not.
	if e.cfg.Callbacks.OnStoppedLeading != nil {
		defer e.cfg.Callbacks.OnStoppedLeading()
	}
	leaders := newLeaderNotifier(e.cfg.Callbacks.OnNewLeader)
	// Goroutine: the OnNewLeader notifier, owned by Run; it exits when stop returns,
	// before OnStoppedLeading.
	go leaders.run()
	defer leaders.stop()

	e.log.Info("trying to acquire the lease", "lease duration", e.cfg.LeaseDuration,
		"renew deadline", e.cfg.RenewDeadline, "retry period", e.cfg.RetryPeriod)
	if !e.acquire(ctx, leaders) {
		return nil
	}

	leadCtx, endLeading := context.WithCancelCause(ctx)
	var leading sync.WaitGroup
	// Goroutine: the leader's work, OnStartedLeading(leadCtx). Run waits for it below,
	// after ending leadCtx.
	leading.Go(func() { e.cfg.Callbacks.OnStartedLeading(leadCtx) })

	if lost := e.renew(ctx, leaders); lost != nil {
		err = fmt.Errorf("%w %s: %w", ErrLeaseLost, e.cfg.Name, lost)
	}
	// Why a cause: the work can tell a lost lease (stop at once: another replica may
	// take over) from a graceful stop (finish what is in hand) by context.Cause.
	endLeading(err)
	e.waitForWork(&leading)
	if e.cfg.ReleaseOnCancel {
		e.release()
	}
	return err
}

// acquire tries until the lease is ours (true) or ctx ends (false). The pause after
// a failed try starts when the try returns (client-go's "sliding" period).
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.acquire (wait.JitterUntil, sliding)
func (e *Elector) acquire(ctx context.Context, leaders *leaderNotifier) bool {
	for ctx.Err() == nil {
		a := e.tryAcquireOrRenew(ctx)
		e.noticeLeader(leaders)
		if a.ok {
			e.log.Info("acquired the lease", "transition", a.transition)
			e.traceAcquired(a)
			return true
		}
		e.log.Debug("did not acquire the lease", "transition", a.transition, "why", a.reason)
		e.traceTried(a)
		wait := e.cfg.RetryPeriod + time.Duration(e.jitter()*JitterFactor*float64(e.cfg.RetryPeriod))
		if !pause.For(ctx, wait) {
			break
		}
	}
	return false
}

// renew keeps the lease until ctx ends (nil) or a renewal round fails (transition R4:
// the error that says why). The first round starts at once, each next one RetryPeriod
// after the previous one succeeded.
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.renew (wait.Until)
func (e *Elector) renew(ctx context.Context, leaders *leaderNotifier) error {
	last := time.Now()
	for {
		a, ok := e.renewRound(ctx, leaders)
		if ctx.Err() != nil {
			// Transition S1.
			e.log.Info("stopped leading: the context ended")
			return nil
		}
		if !ok {
			// Transition R4.
			e.log.Warn("lost the lease: stopping leader work", "last renewed", time.Since(last).Round(time.Millisecond), "why", a.reason)
			e.traceLost(time.Since(last), a.reason)
			return fmt.Errorf("not renewed within the renew deadline (%v): %s", e.cfg.RenewDeadline, a.reason)
		}
		e.traceRenewed(a, time.Since(last))
		last = time.Now()
		if !pause.For(ctx, e.cfg.RetryPeriod) {
			e.log.Info("stopped leading: the context ended")
			return nil
		}
	}
}

// renewRound tries to renew at once and then every RetryPeriod (measured from the
// round's start, not from each try's end) until one try succeeds or RenewDeadline has
// passed since the round began (R3). The tries share the round's deadline, so a
// request still in flight at the deadline is cancelled.
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.renew (wait.PollUntilContextTimeout, immediate)
func (e *Elector) renewRound(ctx context.Context, leaders *leaderNotifier) (attempt, bool) {
	round, cancel := context.WithTimeout(ctx, e.cfg.RenewDeadline)
	defer cancel()
	tick := time.NewTimer(e.cfg.RetryPeriod)
	defer tick.Stop()
	for {
		a := e.tryAcquireOrRenew(round)
		e.noticeLeader(leaders)
		if a.ok {
			return a, true
		}
		// Transition R3.
		e.log.Debug("renewal failed; retrying until the renew deadline", "transition", a.transition, "why", a.reason)
		e.traceTried(a)
		select {
		case <-round.Done():
			return a, false
		case <-tick.C:
		}
		if round.Err() != nil {
			return a, false
		}
		tick.Reset(e.cfg.RetryPeriod)
	}
}

// waitForWork waits for OnStartedLeading to return, warning every RenewDeadline that
// it has not: until it does, this process may still be doing leader work, so Run
// neither releases the lease nor reports that leading stopped.
func (e *Elector) waitForWork(leading *sync.WaitGroup) {
	done := make(chan struct{})
	// Goroutine: closes done when the work returns; it ends with the wait.
	go func() { leading.Wait(); close(done) }()
	for waited := e.cfg.RenewDeadline; ; waited += e.cfg.RenewDeadline {
		select {
		case <-done:
			return
		case <-time.After(e.cfg.RenewDeadline):
			e.log.Warn("OnStartedLeading has not returned since leading stopped; still waiting before releasing the lease",
				"waited", waited)
		}
	}
}

// release clears the Lease's holder, keeping its Transitions, with a lease duration of
// one second (transition S2), so the next candidate's next try takes it over. It uses
// a fresh context (Run's has ended) bounded by RenewDeadline.
//
// Invariant: it writes only over a Lease that, as just read, still names this
// candidate, with the resourceVersion of that read: it never clears another leader's
// lease.
// client-go: tools/leaderelection/leaderelection.go LeaderElector.release
func (e *Elector) release() {
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.RenewDeadline)
	defer cancel()
	current, err := e.cfg.Lock.Get(ctx)
	if err != nil {
		e.log.Error("could not release the lease: reading it failed", "err", err)
		return
	}
	if current.Holder != e.Identity() {
		e.log.Info("not releasing the lease: it is held by another candidate", "holder", current.Holder)
		return
	}
	now := time.Now()
	// Transition S2.
	released := Record{LeaseDurationSeconds: 1, AcquireTime: now, RenewTime: now, Transitions: current.Transitions}
	if err := e.cfg.Lock.Update(ctx, released); err != nil {
		e.log.Error("could not release the lease", "err", err)
		return
	}
	e.observe(released)
	e.log.Info("released the lease")
	e.traceReleased()
}
