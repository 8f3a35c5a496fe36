package leaderelection

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeinternals/informers/internal/pause"
)

// Run takes part in the election until ctx ends or leadership is lost:
//
//  1. acquire: try (A1–A4) until the lease is ours, waiting RetryPeriod plus up to
//     JitterFactor·RetryPeriod between two tries;
//  2. lead: start OnStartedLeading(work) in a goroutine, and renew (R1–R3) every
//     RetryPeriod. Leadership is lost (the work's context and LeaseContext end, the
//     cause wraps ErrLeaseLost) when a round fails for RenewDeadline (R4), when a
//     renewal reads another holder (R5), or when LeaseDuration·(1−StopBeforeExpiry)
//     has passed since the last successful renewal was sent (R6);
//  3. stop: when ctx ends (S1), end the work's context and keep renewing until the
//     work returns; if a renewal fails meanwhile, or ctx ended while a round was
//     failing, the lease counts as lost (S4) and LeaseContext ends at once. Once the
//     work has returned: with ReleaseOnCancel, clear the Lease's holder (S2); call
//     OnStoppedLeading (S3).
//
// A work that returns while ctx is live leaves the term running until ctx ends or
// the lease is lost (transition W1, as in client-go).
//
// Run returns nil after a graceful stop and an error wrapping ErrLeaseLost when the
// lease was lost; a controller usually exits on that error, as client-go's callers
// exit in OnStoppedLeading. Run may be called again after it returns, not
// concurrently.
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.Run
func (e *Elector) Run(ctx context.Context) (err error) {
	// Transition S3: OnStoppedLeading runs whenever Run returns, led or not.
	if e.cfg.Callbacks.OnStoppedLeading != nil {
		defer e.cfg.Callbacks.OnStoppedLeading()
	}
	leaders := newLeaderNotifier(e.cfg.Callbacks.OnNewLeader, e.log)
	// Goroutine: the OnNewLeader notifier, owned by Run; stop ends it before
	// OnStoppedLeading (or, if a call hangs, gives up on it after RetryPeriod).
	go leaders.run()
	defer leaders.stop(e.cfg.RetryPeriod)

	e.log.Info("trying to acquire the lease", "lease duration", e.cfg.LeaseDuration,
		"renew deadline", e.cfg.RenewDeadline, "retry period", e.cfg.RetryPeriod)
	sent, ok := e.acquire(ctx, leaders)
	if !ok {
		return nil
	}

	// Set before the term begins, so that a loss (which sets 0) always comes after.
	e.metrics.leader.Set(1)
	l := e.lead(ctx, sent)
	defer l.end()
	// The write gate opens with the term.
	e.term.Store(l)
	workDone := make(chan struct{})
	// Goroutine: the leader's work, OnStartedLeading(l.work). Run waits for it below.
	go func() {
		defer close(workDone)
		e.cfg.Callbacks.OnStartedLeading(l.work)
	}()

	renewing, stopRenewing := context.WithCancel(l.lease)
	renewed := make(chan struct{})
	// Goroutine: the renewal loop, owned by Run; it exits when stopRenewing is called
	// or the lease is lost, and Run waits for it before releasing.
	go func() {
		defer close(renewed)
		e.renew(renewing, l, leaders)
	}()

	e.superviseWork(ctx, l, workDone)
	stopRenewing()
	<-renewed
	err = l.lost()
	// The term is over: close the write gate (cancelling any write still in flight,
	// from a goroutine the work left behind) before the lease can be released.
	e.term.Store(nil)
	l.end()
	e.metrics.leader.Set(0)
	if e.cfg.ReleaseOnCancel {
		// Safe after a loss too: the work has returned, and release writes only over
		// a Lease that still names this candidate.
		e.release()
	}
	return err
}

// superviseWork waits for the work to return: it delivers a graceful stop when ctx
// ends, and warns every RenewDeadline that the work has not returned once its context
// has ended. A work that returns while ctx is live and the lease held does not end the
// term (transition W1): the term goes on until ctx ends or the lease is lost.
func (e *Elector) superviseWork(ctx context.Context, l *leadership, workDone <-chan struct{}) {
	stopped := ctx.Done()
	var warn <-chan time.Time
	var lost <-chan struct{} // watched only after W1
	returned := false
	waited := time.Duration(0)
	for {
		select {
		case <-workDone:
			if ctx.Err() != nil || l.lease.Err() != nil {
				return
			}
			// Transition W1: OnStartedLeading returned by itself. client-go keeps
			// leading until its context ends, and the porting pattern relies on it:
			// `go mgr.Start(ctx); return` leaves the real work in a goroutine that
			// holds the work's context. So the lease stays renewed and the write gate
			// open; ctx's end stops the term gracefully (S1, then S2), a loss ends it
			// as ever. What Run cannot do: wait for that goroutine before releasing.
			e.log.Info("OnStartedLeading returned while the context is live: leading on until the context ends or the lease is lost")
			returned, workDone, lost = true, nil, l.lease.Done()
		case <-lost:
			return
		case <-stopped:
			stopped = nil
			l.stop(context.Cause(ctx))
			if returned {
				return
			}
		case <-warn:
			waited += e.cfg.RenewDeadline
			e.log.Warn("OnStartedLeading has not returned since its context ended; still waiting before releasing the lease",
				"waited", waited, "lease lost", l.lost() != nil)
		}
		if !returned && warn == nil && l.work.Err() != nil {
			t := time.NewTicker(e.cfg.RenewDeadline)
			defer t.Stop()
			warn = t.C
		}
	}
}

// acquire tries until the lease is ours (true, with when the winning attempt began) or
// ctx ends (false). The pause after a failed try starts when the try returns
// (client-go's "sliding" period).
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.acquire (wait.JitterUntil, sliding)
func (e *Elector) acquire(ctx context.Context, leaders *leaderNotifier) (sent time.Time, ok bool) {
	for ctx.Err() == nil {
		a := e.tryAcquireOrRenew(ctx, false)
		e.noticeLeader(leaders)
		if a.ok {
			e.log.Info("acquired the lease", "transition", a.transition)
			e.traceAcquired(a)
			return a.sent, true
		}
		e.log.Debug("did not acquire the lease", "transition", a.transition, "why", a.reason)
		e.traceTried(a)
		wait := e.cfg.RetryPeriod + time.Duration(e.jitter()*JitterFactor*float64(e.cfg.RetryPeriod))
		if !pause.For(ctx, wait) {
			break
		}
	}
	return time.Time{}, false
}

// renew keeps the lease until ctx ends or the lease is lost (R4, R5, R7, S4; R6 fires
// on its own timer). The first round starts at once, each next one RetryPeriod after
// the previous round's successful renewal was sent — at once if its answer came later
// than that.
//
// Why from the send, where client-go's wait.Until counts from the answer: R6 counts
// from the send. Timed from the answer, a renewal answered late pushes the next round
// late by as much, and with timings New accepts (15 s / 14 s / 11 s) answers 1.3 s late
// would fire R6 before the next round had been answered. Timed from the send, the
// next round starts RetryPeriod after the send, always before R6
// (RetryPeriod < RenewDeadline/1.2 < LeaseDuration·0.9), and R6 fires only when a
// renewal is answered more than LeaseDuration·0.9 − RetryPeriod after it was sent.
// With instant answers the two schedules are the same.
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.renew (wait.Until)
func (e *Elector) renew(ctx context.Context, l *leadership, leaders *leaderNotifier) {
	last := l.lastSent
	for {
		a, ok := e.renewRound(ctx, l, leaders)
		if !ok {
			return
		}
		e.traceRenewed(a, a.sent.Sub(last))
		last = a.sent
		if !pause.For(ctx, max(0, time.Until(a.sent.Add(e.cfg.RetryPeriod)))) {
			return
		}
	}
}

// renewRound tries to renew at once and then every RetryPeriod (measured from the
// round's start, not from each try's end) until one try succeeds (true), the lease is
// lost, or RenewDeadline has passed since the round began (R4). The tries share the
// round's deadline, so a request still in flight at the deadline is cancelled.
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.renew (wait.PollUntilContextTimeout, immediate)
func (e *Elector) renewRound(ctx context.Context, l *leadership, leaders *leaderNotifier) (attempt, bool) {
	round, cancel := context.WithTimeout(ctx, e.cfg.RenewDeadline)
	defer cancel()
	tick := time.NewTimer(e.cfg.RetryPeriod)
	defer tick.Stop()
	for {
		a := e.tryAcquireOrRenew(round, true)
		e.noticeLeader(leaders)
		if a.ok {
			l.renewed(a.sent)
			e.metrics.renewDuration.Observe(time.Since(a.sent).Seconds())
			return a, true
		}
		if ctx.Err() != nil {
			// Stopped by Run (the work returned) or by a loss: not a failure.
			return a, false
		}
		// Transition R3.
		e.log.Debug("renewal failed; retrying until the renew deadline", "transition", a.transition, "why", a.reason)
		e.traceTried(a)
		l.failed(a)
		select {
		case <-round.Done():
		case <-tick.C:
		}
		if ctx.Err() != nil {
			return a, false
		}
		if round.Err() != nil {
			// Transition R4.
			l.lose("R4", fmt.Sprintf("not renewed within the renew deadline (%v): %s", e.cfg.RenewDeadline, a.reason))
			return a, false
		}
		tick.Reset(e.cfg.RetryPeriod)
	}
}

// release clears the Lease's holder, keeping its Transitions, with a lease duration of
// one second (transition S2), so the next candidate's next try takes it over. It uses
// a fresh context (Run's has ended) bounded by RenewDeadline.
//
// A 409 Conflict on the release's write is read again and retried, until the context
// ends: a renewal whose context ended while it was in flight may still have been
// applied by the apiserver, moving the Lease's resourceVersion past the one this
// candidate last read. Without the retry that Lease would stay held, by a candidate
// that stopped, for a whole LeaseDuration.
//
// Invariant: it writes only over a Lease that, as just read, still names this
// candidate, with the resourceVersion of that read: it never clears another leader's
// lease. (client-go 1.37 retries too, but decides from the holder it last observed,
// not the one it just read.)
// client-go: tools/leaderelection/leaderelection.go LeaderElector.release, LeaderElector.tryRelease
func (e *Elector) release() {
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.RenewDeadline)
	defer cancel()
	var released Record
	for {
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
		released = Record{LeaseDurationSeconds: 1, AcquireTime: now, RenewTime: now, Transitions: current.Transitions}
		err = e.cfg.Lock.Update(ctx, released)
		if err == nil {
			break
		}
		if !apierrors.IsConflict(err) {
			e.log.Error("could not release the lease", "err", err)
			return
		}
		e.log.Debug("the lease changed since it was read (a renewal still in flight was applied): reading it again", "err", err)
	}
	e.observe(released)
	e.log.Info("released the lease")
	e.traceReleased()
}
