package parity

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kubeinternals/informers/parity/internal/check"
)

// What TestLeaderElection compares, and why not everything exactly.
//
// Both libraries wait a random time between two attempts to acquire the lease
// (RetryPeriod plus up to JitterFactor·RetryPeriod): client-go through wait.Jitter on
// math/rand's global source, which a test cannot seed per call, ours through a source
// the package does not export. So the instant a follower takes over, and which of two
// followers wins, are random on both sides and cannot be compared exactly. Everything
// that does not depend on a follower's jitter is compared exactly, by making the
// script's disruptions start at a fixed offset after one of the leader's renewals
// (renewals are not jittered, in either library):
//
//   - exact: the first candidate leads from +0s (A1, created the Lease); how long after
//     its last successful renewal a crashed, cancelled or cut-off leader stops leading;
//     whether a leader survives an outage; whether the Lease is released or left to
//     expire; how many candidates are live; whether every live candidate's latest
//     OnNewLeader names the holder; the Lease's final holder (as a role: the live
//     leader, released, a stopped candidate) and its leaseTransitions; how many stopped
//     candidates had OnStoppedLeading called once.
//   - by bounds, checked on each side alone: each takeover comes no earlier than
//     LeaseDuration after the write it replaces (the lease had expired) and no later
//     than LeaseDuration + 2·(1+JitterFactor)·RetryPeriod after it — the follower may
//     first see that write up to one jittered retry late, and take over up to one
//     jittered retry after it expired; a released Lease is taken over within one
//     jittered retry (1+JitterFactor)·RetryPeriod. The taker must be a live follower.
//   - checked on each side alone: no two candidates lead at once (from
//     OnStartedLeading to the end of its context).
//   - by role, not name: a follower that took over is "the only live follower" or
//     "one of N live followers", never its identity, since which one wins is random.
//
// The timings keep RetryPeriod + RenewDeadline ≤ 0.9·LeaseDuration. There, a leader cut
// off from the apiserver stops at the end of its failed renewal round in both
// libraries, before any follower may take over. Beyond it client-go's leader can still
// lead when a follower takes over, and ours stops first (its own deadline, R6): that is
// the deliberate difference shown in leaderelection_exceptions_test.go.
//
// RetryPeriod is at least 1s: client-go decides that the Lease changed by comparing its
// JSON, whose times have one-second precision, so renewals less than a second apart
// can look like no change, and client-go's followers then count the lease from an
// older renewal (doc.go of leaderelection lists that difference; it is not this test's).

// leTiming is the election's timing, the same for every candidate of a script.
type leTiming struct {
	leaseDuration, renewDeadline, retryPeriod time.Duration
	release                                   bool // ReleaseOnCancel
}

// defaultLETiming is used when shrinking dropped the script's timing.
var defaultLETiming = leTiming{leaseDuration: 4 * time.Second, renewDeadline: 1501 * time.Millisecond, retryPeriod: time.Second}

// leOp is one step of the script.
type leOp struct {
	kind   string        // timing, start, crash, cancel, pause
	timing leTiming      // timing
	after  time.Duration // crash, cancel, pause: how long after the leader's next renewal
	d      time.Duration // pause: how long the leader is cut off
	hang   bool          // pause: its requests hang instead of failing at once
}

func (o leOp) String() string {
	switch o.kind {
	case "timing":
		t := o.timing
		return fmt.Sprintf("Timing(LeaseDuration %v, RenewDeadline %v, RetryPeriod %v, ReleaseOnCancel %v)",
			t.leaseDuration, t.renewDeadline, t.retryPeriod, t.release)
	case "start":
		return "Start a candidate"
	case "crash":
		return fmt.Sprintf("Crash the leader %v after its next renewal", o.after)
	case "cancel":
		return fmt.Sprintf("Cancel the leader %v after its next renewal", o.after)
	}
	mode := "fail at once"
	if o.hang {
		mode = "hang"
	}
	return fmt.Sprintf("Cut the leader off for %v, %v after its next renewal (its requests %s)", o.d, o.after, mode)
}

// genLETiming picks a valid timing with RetryPeriod + RenewDeadline ≤ 0.9·LeaseDuration.
// RenewDeadline has an odd number of milliseconds beyond a whole multiple, so that its
// end never falls on the instant of a retry.
func genLETiming(r *rand.Rand) leTiming {
	rp := []time.Duration{time.Second, 1500 * time.Millisecond, 2 * time.Second}[r.IntN(3)]
	rd := rp*12/10 + time.Duration(2*r.IntN(1000)+1)*time.Millisecond
	ld := ((rp+rd)*10/9)/time.Second*time.Second + time.Second
	ld += time.Duration(r.IntN(3)) * time.Second
	return leTiming{leaseDuration: ld, renewDeadline: rd, retryPeriod: rp, release: r.IntN(2) == 0}
}

// genLEOps makes a timing, then 2 to 8 steps; a start adds a replica (c1, c2, … in
// order) while fewer than three are live. Offsets and outages carry half a
// millisecond so that a disruption never starts or ends on the instant of a retry.
func genLEOps(r *rand.Rand) []leOp {
	tm := genLETiming(r)
	ops := []leOp{{kind: "timing", timing: tm}}
	for range 2 + r.IntN(7) {
		after := time.Duration(r.IntN(int(tm.retryPeriod/time.Millisecond)-1))*time.Millisecond + 500*time.Microsecond
		switch p := r.IntN(100); {
		case p < 40:
			ops = append(ops, leOp{kind: "start"})
		case p < 55:
			ops = append(ops, leOp{kind: "crash", after: after})
		case p < 75:
			ops = append(ops, leOp{kind: "cancel", after: after})
		default:
			span := tm.retryPeriod + tm.renewDeadline + tm.leaseDuration
			d := time.Duration(1+r.IntN(int(span/time.Millisecond))) * time.Millisecond
			// Hanging requests only without ReleaseOnCancel: see leScript.play.
			ops = append(ops, leOp{kind: "pause", after: after, d: d, hang: !tm.release && r.IntN(2) == 0})
		}
	}
	return ops
}

// simplifyLEOp offers a shorter outage, and failing instead of hanging.
func simplifyLEOp(o leOp) []leOp {
	if o.kind != "pause" {
		return nil
	}
	var out []leOp
	if o.hang {
		s := o
		s.hang = false
		out = append(out, s)
	}
	if o.d > time.Millisecond {
		s := o
		s.d = (o.d/2)/time.Millisecond*time.Millisecond + time.Millisecond
		if s.d < o.d {
			out = append(out, s)
		}
	}
	return out
}

// TestLeaderElection runs the same script against client-go's LeaderElector and ours,
// each in its own world (one in-memory Lease per library, fake time), and compares what
// the transcripts say (see the comment at the top of this file: what exactly, what by
// bounds).
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.tryAcquireOrRenew
// client-go: tools/leaderelection/leaderelection.go LeaderElector.renew
// client-go: tools/leaderelection/leaderelection.go LeaderElector.release
// client-go: tools/leaderelection/leaderelection.go LeaderElector.acquire
func TestLeaderElection(t *testing.T) {
	check.Run(t, check.Config[leOp]{Runs: 300, Simplify: simplifyLEOp}, genLEOps, func(ops []leOp) error {
		ours, err := runLEScript(t, startOurs, ops)
		if err != nil {
			return fmt.Errorf("ours: %w", err)
		}
		theirs, err := runLEScript(t, startClientGo, ops)
		if err != nil {
			return fmt.Errorf("client-go: %w", err)
		}
		return check.Transcripts(&ours, &theirs)
	})
}
