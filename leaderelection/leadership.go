package leaderelection

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// StopBeforeExpiry is how much earlier than LeaseDuration the leader's own deadline
// comes, as a fraction of LeaseDuration: the leader's work is told to stop
// LeaseDuration·(1−StopBeforeExpiry) after it sent its last renewal that succeeded
// (transition R6), measured on its own monotonic clock.
//
// Why a margin at all: another candidate may take over LeaseDuration after it saw that
// renewal, on its own clock. It saw the renewal after it was sent, so with clocks that
// tick at the same rate the leader is always first; a tenth of the lease covers clocks
// whose rates differ by up to 10% — NTP keeps real machines within 0.05%.
const StopBeforeExpiry = 0.1

// leaseKey is the context key under which the work's context holds the lease context
// (LeaseContext).
type leaseKey struct{}

// LeaseContext returns the context that ends the moment this replica must stop all
// leader work at once: the lease is lost, or may be (a renewal failed while the work
// was draining, or the leader's own deadline passed). Its cause wraps ErrLeaseLost.
//
// ctx must be OnStartedLeading's context or derived from it; for any other context,
// LeaseContext returns ctx itself.
//
// Why a second context: OnStartedLeading's context ends at the first signal — a
// graceful stop (finish what is in hand: the elector keeps renewing meanwhile) or a
// loss — and a context's cause is final. A work that drains after a graceful stop
// needs to hear that the lease was lost during the drain: it runs its requests under
// LeaseContext, and stops draining when LeaseContext ends.
func LeaseContext(ctx context.Context) context.Context {
	if lease, ok := ctx.Value(leaseKey{}).(context.Context); ok {
		return lease
	}
	return ctx
}

// leadership is one term of leading: the two contexts the work sees, the leader's own
// deadline, and what the renewals have done so far. Run creates it when the lease is
// acquired and ends it when the work has returned.
//
// Invariant: work ⊂ lease — ending lease (a loss) ends work too; ending work (a
// graceful stop) leaves lease live while renewals succeed.
type leadership struct {
	e *Elector

	// lease ends at a loss (LeaseContext); loseLease ends it with a cause wrapping
	// ErrLeaseLost. The first cause is final.
	lease     context.Context
	loseLease context.CancelCauseFunc
	// work is OnStartedLeading's context; stopWork ends it gracefully.
	work     context.Context
	stopWork context.CancelCauseFunc
	// deadline fires R6; reset at every successful renewal.
	deadline *time.Timer

	mu sync.Mutex
	// lastSent is when the last successful attempt (acquisition or renewal) began;
	// guarded by mu.
	lastSent time.Time
	// failing is true while a renewal round has failed at least once and not yet
	// succeeded; guarded by mu.
	failing bool
	// draining is true once a graceful stop has ended work; guarded by mu.
	draining bool
	// lostBy is the transition that lost the lease ("" while held); guarded by mu.
	lostBy string
}

// lead starts a term whose lease was won by an attempt sent at sent. parent is Run's
// context: only its values carry over — ending it is a graceful stop, which Run
// delivers through stop.
func (e *Elector) lead(parent context.Context, sent time.Time) *leadership {
	l := &leadership{e: e, lastSent: sent}
	l.lease, l.loseLease = context.WithCancelCause(context.WithoutCancel(parent))
	work, stopWork := context.WithCancelCause(l.lease)
	l.work, l.stopWork = context.WithValue(work, leaseKey{}, l.lease), stopWork
	// Transition R6: the leader's own deadline, armed from the acquisition's send.
	l.deadline = time.AfterFunc(e.ownDeadline(sent), func() { l.lose("R6", e.deadlinePassed("")) })
	return l
}

// leaderTerm is LeaseDuration·(1−StopBeforeExpiry): how long after sending its last
// successful renewal the leader may still work.
func (e *Elector) leaderTerm() time.Duration {
	return e.cfg.LeaseDuration - time.Duration(StopBeforeExpiry*float64(e.cfg.LeaseDuration))
}

// deadlinePassed is R6's reason, with how it was noticed appended.
func (e *Elector) deadlinePassed(noticed string) string {
	return fmt.Sprintf("no renewal succeeded within %v of sending the last one (LeaseDuration less %.0f%%)%s",
		e.leaderTerm(), StopBeforeExpiry*100, noticed)
}

// ownDeadline is how long from now until leaderTerm has passed since sent.
func (e *Elector) ownDeadline(sent time.Time) time.Duration {
	return time.Until(sent.Add(e.leaderTerm()))
}

// renewed records a successful renewal sent at sent: the deadline moves to
// leaderTerm after it.
func (l *leadership) renewed(sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failing = false
	if l.lostBy != "" {
		return // Pitfall: a loss is final even if a late answer says the write landed.
	}
	l.lastSent = sent
	l.deadline.Reset(l.e.ownDeadline(sent))
}

// failed records a failed renewal attempt. A read that showed another holder is a loss
// at once (R5), and so is a Lease someone who is not a candidate deleted or cleared
// (R7); so is any failure while draining (S4): the work was told to finish what it
// holds on the promise that the lease stays ours.
func (l *leadership) failed(a attempt) {
	l.mu.Lock()
	draining := l.draining
	l.failing = true
	l.mu.Unlock()
	switch {
	case a.transition == "A2":
		// Transition R5.
		l.lose("R5", a.reason)
	case a.transition == "R7":
		// Transition R7.
		l.lose("R7", a.reason)
	case draining:
		// Transition S4.
		l.lose("S4", "a renewal failed while the work was draining: "+a.reason)
	}
}

// stop is a graceful stop (transition S1): the work's context ends with cause, and
// renewals go on while it drains. A stop that comes while the round is failing is a
// loss instead (transition S4): the lease may already be gone.
func (l *leadership) stop(cause error) {
	l.mu.Lock()
	failing, lost := l.failing, l.lostBy != ""
	if !failing {
		l.draining = true
	}
	l.mu.Unlock()
	switch {
	case lost:
		return // the work was told already
	case failing:
		// Transition S4.
		l.lose("S4", "stopped while a renewal round was failing")
		return
	}
	// Transition S1.
	l.e.log.Info("stopping leader work: the context ended; renewing the lease until the work returns")
	l.stopWork(cause)
}

// lose ends both contexts with a cause wrapping ErrLeaseLost. Only the first loss
// counts; it is logged and traced.
func (l *leadership) lose(transition, why string) {
	l.mu.Lock()
	if l.lostBy != "" {
		l.mu.Unlock()
		return
	}
	l.lostBy = transition
	since := time.Since(l.lastSent)
	l.mu.Unlock()
	l.deadline.Stop()
	l.e.metrics.leader.Set(0)
	l.e.log.Warn("lost the lease: stopping leader work at once", "transition", transition,
		"last successful renewal sent", since.Round(time.Millisecond), "why", why)
	l.e.traceLost(transition, since, why)
	l.loseLease(fmt.Errorf("%w %s (%s): %s", ErrLeaseLost, l.e.cfg.Name, transition, why))
}

// admits reports whether the write gate lets a write through now: the lease has not
// been lost and the leader's own deadline has not passed. A deadline that passed
// before its timer could run — a process that has just woken from a pause — is
// transition R6 now, here: the gate does not wait for the timer goroutine.
func (l *leadership) admits() bool {
	l.mu.Lock()
	lost := l.lostBy != ""
	since := time.Since(l.lastSent)
	l.mu.Unlock()
	if lost {
		return false
	}
	if since >= l.e.leaderTerm() {
		// Transition R6, seen by the gate before the timer fired.
		l.lose("R6", l.e.deadlinePassed("; noticed by the write gate"))
		return false
	}
	return l.lease.Err() == nil
}

// lost is the loss's cause, or nil while the lease is held.
func (l *leadership) lost() error {
	if l.lease.Err() == nil {
		return nil
	}
	return context.Cause(l.lease)
}

// end releases the term's timer and contexts once the work has returned.
func (l *leadership) end() {
	l.deadline.Stop()
	l.stopWork(context.Canceled)
	l.loseLease(context.Canceled) // a no-op after a loss: the first cause stays
}
