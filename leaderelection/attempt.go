package leaderelection

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// attempt is the outcome of one tryAcquireOrRenew: which transition it took (the
// names in doc.go), whether this candidate holds the lease now, and why not.
type attempt struct {
	transition string
	ok         bool
	// reason says why the attempt failed, for the log and the trace.
	reason string
	// err is the Lock's error when the attempt failed on one (A4).
	err error
	// previous is the holder an A3 took the lease from ("" if it was released).
	previous string
	// sent is when the attempt began: for a successful write, no later than the
	// moment the apiserver committed it, so every other candidate saw it after sent.
	sent time.Time
}

// tryAcquireOrRenew makes one attempt to acquire or renew the lease:
//
//   - R1: believing it leads, and the lease valid on its clock, it updates the lease
//     it last wrote, without reading it first (the fast path of every renewal).
//   - otherwise it reads the Lease, and
//   - A1: creates it if it does not exist;
//   - A2: gives up if another holder's lease has not expired on this candidate's
//     clock;
//   - A3: takes it over (Transitions+1) if it expired or nobody holds it;
//   - R2: renews it (same AcquireTime and Transitions) if this candidate holds it;
//   - A4: fails on any error of the Lock, a 409 Conflict included (another
//     candidate wrote first).
//
// A renewal (renewing: the attempt is part of a term's renewal round) also fails, as
// R7, when it finds that someone who is not a candidate changed the Lease: it is gone
// (404 on the fast write or on the read) or its holder was cleared. A renewal never
// creates the Lease again, so it never races a standby's create (where client-go's
// would, and would work on until its retry read the winner). The round loses the
// lease at once on R7.
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.tryAcquireOrRenew
func (e *Elector) tryAcquireOrRenew(ctx context.Context, renewing bool) attempt {
	now := time.Now()
	mine := Record{
		Holder:               e.Identity(),
		LeaseDurationSeconds: int(e.cfg.LeaseDuration / time.Second),
		AcquireTime:          now,
		RenewTime:            now,
	}

	// Transition R1: the fast path. The Lock's Update carries the version of our own
	// last write, so it fails if anyone wrote since — then we read (below).
	if e.IsLeader() && e.validAt(now) {
		old := e.observedRecord()
		mine.AcquireTime, mine.Transitions = old.AcquireTime, old.Transitions
		err := e.cfg.Lock.Update(ctx, mine)
		if err == nil {
			e.observeAt(mine, now)
			return attempt{transition: "R1", ok: true, sent: now}
		}
		if renewing && apierrors.IsNotFound(err) {
			// Transition R7: the Lease was deleted under the leader.
			return attempt{transition: "R7", reason: fmt.Sprintf("the lease was deleted: %v", err), err: err}
		}
		if ctx.Err() != nil {
			// Transition A4: the round ended (a loss, a stop) while the write was in
			// flight; nothing more is sent for it.
			return attempt{transition: "A4", reason: fmt.Sprintf("renewing the lease: %v", err), err: err}
		}
		e.log.Debug("renewing without reading failed; reading the lease", "err", err)
	}

	current, err := e.cfg.Lock.Get(ctx)
	switch {
	case apierrors.IsNotFound(err) && renewing:
		// Transition R7: the Lease was deleted under the leader. Why not create it
		// again: a standby that saw it gone may create it at its next try, and a
		// leader that raced it would work beside it until the create failed.
		return attempt{transition: "R7", reason: fmt.Sprintf("the lease was deleted: %v", err), err: err}
	case apierrors.IsNotFound(err):
		// Transition A1: nobody created the Lease yet.
		if err := e.cfg.Lock.Create(ctx, mine); err != nil {
			// Transition A4: someone else created it first, or the create failed.
			return attempt{transition: "A4", reason: fmt.Sprintf("creating the lease: %v", err), err: err}
		}
		e.observeAt(mine, now)
		return attempt{transition: "A1", ok: true, sent: now}
	case err != nil:
		// Transition A4: the read failed.
		return attempt{transition: "A4", reason: fmt.Sprintf("reading the lease: %v", err), err: err}
	}

	// Invariant: observedAt moves only when the record changes, so a holder that
	// stopped renewing is seen expiring LeaseDurationSeconds after its last write
	// reached us, on our clock.
	if !current.equal(e.observedRecord()) {
		e.observe(current)
	}
	if current.Holder != "" && current.Holder != e.Identity() && e.validAt(now) {
		// Transition A2.
		return attempt{transition: "A2", reason: fmt.Sprintf("held by %s, not expired on this candidate's clock", current.Holder)}
	}

	if renewing && current.Holder == "" {
		// Transition R7: someone who is not a candidate cleared the holder (this
		// candidate releases only after its term). A standby may take it at its next
		// try: stop rather than race it.
		return attempt{transition: "R7", reason: "the lease's holder was cleared by someone who is not a candidate"}
	}
	transition := "R2"
	if current.Holder == e.Identity() {
		// Transition R2: still ours; renew it. Counted before the write, whether it
		// succeeds or not, as client-go counts its slow path.
		// client-go: tools/leaderelection/leaderelection.go LeaderElector.tryAcquireOrRenew (slowpathExercised)
		mine.AcquireTime, mine.Transitions = current.AcquireTime, current.Transitions
		e.metrics.slowpath.Inc()
	} else {
		// Transition A3: expired, or released (no holder).
		transition = "A3"
		mine.Transitions = current.Transitions + 1
	}
	if err := e.cfg.Lock.Update(ctx, mine); err != nil {
		// Transition A4: a 409 Conflict means another candidate wrote first.
		return attempt{transition: "A4", reason: fmt.Sprintf("writing the lease: %v", err), err: err}
	}
	e.observeAt(mine, now)
	return attempt{transition: transition, ok: true, previous: current.Holder, sent: now}
}
