// Package leaderelection lets several replicas of a controller agree that exactly one
// of them does the work: they compete for a coordination.k8s.io/v1 Lease, the holder
// renews it every few seconds, and when it stops renewing — it crashed, it was cut off,
// it shut down — another replica takes over. It is client-go's tools/leaderelection
// (LeaderElector over a LeaseLock), rebuilt on k8s.io/client-go/rest alone.
//
// # Where it sits
//
// Leader election is not a stage of the informer pipeline; it decides whether the
// controller's workers run at all. Informers may start before leading — a replica that
// takes over then starts with a warm cache:
//
//	replica A                              replica B
//	informers ──▶ cache (synced)           informers ──▶ cache (synced)
//	Elector ──renews──▶ Lease ◀──reads──── Elector (waits for the Lease to expire)
//	  │ OnStartedLeading(ctx)
//	  ▼
//	workers ──▶ reconcile ──▶ writes       (no workers)
//
// # The Lease
//
// A Lease's spec is the Record: holderIdentity, leaseDurationSeconds, acquireTime,
// renewTime, leaseTransitions. The holder rewrites it every RetryPeriod with a fresh
// renewTime; every write changes the Lease's resourceVersion, and a write must name the
// resourceVersion it read (the apiserver answers 409 Conflict otherwise). That
// precondition is the only clock the candidates share.
//
// # The state machine
//
// Every transition is marked in the code with a "Transition <id>" comment, is the
// Type of its trace event, and has a row and a test in docs/08-leader-election.md.
//
//	            ┌──────────── wait RetryPeriod + [0, 1.2·RetryPeriod) ◀──────────┐
//	            ▼                                                               │
//	ACQUIRING ──try──▶ A1 create / A3 take over ──▶ LEADING          A2 held / A4 error
//	                                                  │ renew round RetryPeriod after the
//	                                                  │ last send: R1 fast write, R2
//	                                                  │ read+write, R3 retry until
//	                                                  │ RenewDeadline; W1 work returned:
//	                                                  │ lead on
//	      LOST ◀── R4 round failed, R5 another holder, R6 own deadline,
//	               R7 Lease deleted or cleared by a non-candidate
//	       │                                          │ S1 ctx ended: the work's ctx ends,
//	       │                                          ▼    renewals go on
//	       │◀── S4 a renewal failed ─────────────── DRAINING
//	       │    (or the stop came while a round       │ the work returned
//	       │     was failing)                         ▼
//	       └─ LeaseContext ends; wait for the work ─▶ S2 release (ReleaseOnCancel),
//	                                                  S3 OnStoppedLeading → STOPPED
//
// ACQUIRING (client-go: tools/leaderelection/leaderelection.go LeaderElector.acquire,
// tryAcquireOrRenew)
//
//   - A1 no Lease exists → create it naming this candidate → LEADING.
//   - A2 another holder's lease has not expired → wait, try again. "Expired" is
//     measured on this candidate's clock: leaseDurationSeconds since it last saw the
//     Lease change, never by reading the holder's renewTime (clocks disagree).
//   - A3 the lease expired, or has no holder (released) → write it naming this
//     candidate, leaseTransitions+1 → LEADING.
//   - A4 a request failed, a 409 Conflict included (another candidate wrote first) →
//     wait, try again.
//
// LEADING (client-go: tools/leaderelection/leaderelection.go LeaderElector.renew)
//
//   - R1 believing it holds a valid lease, the leader writes over its own last
//     version without reading (the fast path); a conflict falls back to R2.
//   - R2 read, and renew if the Lease still names this candidate (keeping
//     acquireTime and leaseTransitions).
//   - R3 a failed attempt is retried every RetryPeriod within the round.
//   - R4 no attempt succeeded within RenewDeadline of the round's start → lost.
//   - R5 a renewal read an unexpired Lease naming another holder → lost at once.
//   - R6 LeaseDuration·(1−StopBeforeExpiry) has passed since the leader sent its last
//     successful renewal (or acquisition), on its own monotonic clock → lost. A timer,
//     not a renewal, fires it: a request that hangs or answers late does not delay it.
//     Each round starts RetryPeriod after the last successful renewal was *sent*, so
//     R6 fires only for a renewal answered more than
//     LeaseDuration·(1−StopBeforeExpiry) − RetryPeriod after its send.
//   - R7 a renewal found the Lease deleted (404) or its holder cleared — a change by
//     someone who is not a candidate, such as `kubectl delete lease` → lost at once. A
//     renewal never creates the Lease again.
//   - W1 OnStartedLeading returned while Run's context is live → the term goes on
//     (renewals, write gate) until the context ends (S1) or the lease is lost, as in
//     client-go. Run cannot wait for work the callback left in a goroutine.
//
// A loss ends the work's context and LeaseContext with a cause wrapping ErrLeaseLost;
// Run waits for the work to return and returns that error.
//
// STOPPING
//
//   - S1 Run's context ended while leading (and no renewal round was failing): the
//     work's context ends with the caller's cause — finish what is in hand — and the
//     leader keeps renewing while the work drains.
//   - S4 a renewal attempt failed while the work drained, or Run's context ended while
//     a round was failing → lost: LeaseContext ends (the second signal: stop now).
//   - S2 with ReleaseOnCancel, once the work returned (after a graceful stop or a
//     loss): clear the holder (lease duration 1s), so the next candidate's next try
//     takes over. It writes only over a Lease that still names this candidate; a
//     409 Conflict (a renewal still in flight was applied) is read again and retried.
//   - S3 OnStoppedLeading, whether or not this candidate ever led.
//   - O1 (any state) the holder this candidate observes changed → OnNewLeader.
//
// # The guarantee
//
// Another candidate takes over no earlier than LeaseDuration after it saw this
// leader's last renewal, on its clock; it saw the renewal after the leader sent it.
// The leader's work is told to stop — its context and LeaseContext end — no later than
// LeaseDuration·(1−StopBeforeExpiry) after it sent its last successful renewal, on the
// leader's clock (R6; R4 and R5 may come sooner). So as long as the two clocks' rates
// differ by less than StopBeforeExpiry (10%) — their readings may differ by any
// amount — the old leader's work is told to stop before any other candidate may start.
//
// Precondition: only candidates write the Lease. Someone else who deletes it or
// clears its holder lets a standby take it at its next try, while the leader works on
// until its next renewal finds the change (R7, or R5 if the standby was first): the two
// overlap by at most RetryPeriod plus one request. (client-go's leader re-creates a
// deleted Lease and, when its create loses to a standby's, works on until a retry
// reads the winner.)
//
// During a graceful stop the lease stays renewed until the work has returned, and is
// released only then. The tests in safety_test.go and timing_test.go show each case
// as an exact timeline.
//
// What it does not guarantee:
//
//   - that the work obeys: "told to stop" is a context ending. Work that ignores its
//     context, or runs requests under context.WithoutCancel, keeps going; Run warns
//     every RenewDeadline while it waits for OnStartedLeading to return.
//   - a request already sent: a write the apiserver accepted before the context ended
//     lands, whenever its answer arrives.
//   - a paused process (SIGSTOP, a frozen VM, a long stop-the-world pause): when it
//     wakes, R6 fires at once, but a worker that was in the middle of a sync runs on
//     until it next looks at its context. Contexts cannot close that window, and the
//     writes' resourceVersion preconditions stop a write over a version of the object
//     the stale leader has not seen, not a write computed from a stale input. The
//     write gate closes it for every write sent through it (below).
//
// # The write gate
//
// Clients built from Elector.Gated(cfg) (or with Elector.WriteGate as their
// transport wrapper) send writes — every method but GET, HEAD, OPTIONS and TRACE —
// only while this candidate holds its term: from the acquisition until a loss, or
// until the work has returned (before the release). A write sent outside it fails with
// ErrWriteGateClosed without leaving the process; a write in flight when the term ends
// is cancelled. The gate checks the leader's own deadline (R6) on every write, so a
// worker that wakes from a pause sends nothing, even before the R6 timer has run.
// What it cannot stop: a write the apiserver accepted before the gate closed, and a
// write whose bytes were already on the wire when the process paused
// (docs/08-leader-election.md, "What can still go wrong").
//
// # Invariants
//
//   - RenewDeadline < LeaseDuration (New refuses otherwise): with the defaults, a
//     leader cut off from the apiserver gives up at R4 before R6 would fire.
//   - Run waits for OnStartedLeading to return before it releases the lease or calls
//     OnStoppedLeading, and keeps renewing until then unless the lease was lost.
//   - A release writes only over a Lease that, as just read, names this candidate.
//
// # Reading order
//
//  1. record.go — Record, the Lease spec without pointers.
//  2. lock.go — the Lock interface and LeaseLock (GET, POST, PUT with the precondition).
//  3. config.go — Config, Callbacks, the defaults and their validation; takeover.go —
//     how long the work stays undone when a leader stops (Config.TakeoverWindow).
//  4. elector.go — Elector: what it observed and when, IsLeader, Check.
//  5. attempt.go — tryAcquireOrRenew: A1–A4, R1, R2.
//  6. run.go — Run: the acquire loop, renewal rounds (R3–R5), release.
//  7. leadership.go — one term of leading: the work's two contexts (LeaseContext),
//     the leader's own deadline (R6), graceful stop and loss (S1, S4).
//  8. writegate.go — the write gate: which requests pass, and when.
//  9. metrics.go — whether this candidate leads, slow renewals, transitions, latency.
//  10. notifier.go, trace.go — OnNewLeader in order; the trace events.
//
// # Differences from client-go
//
//   - The guarantee above is ours. client-go stops renewing when its context ends and
//     starts OnStartedLeading in a goroutine it never waits for, so a leader that
//     drains keeps working after its lease expired; it stops a leader that cannot
//     renew RenewDeadline after the round began, timed from the previous answer, not
//     the send; and it keeps renewing for RenewDeadline after a read showed another
//     holder. Ours keeps renewing while the work drains, stops it at R5 and R6, and
//     tells a draining work of a loss through LeaseContext.
//   - release reads the Lease and writes only if it still names this candidate;
//     client-go checks its last observation, which may be stale after failed renewals.
//   - A change of the Lease is detected by comparing records at the Lease's microsecond
//     precision; client-go compares their JSON, where times have one-second precision.
//   - OnNewLeader is called in order on one goroutine; client-go starts a goroutine per
//     call. A call that blocks holds Run back at most RetryPeriod after leading ends;
//     the calls still queued then are dropped, so none comes after OnStoppedLeading.
//     OnStoppedLeading is optional.
//   - Zero durations mean 15s/10s/2s (kube-controller-manager's defaults); client-go
//     requires all three. LeaseDuration must be whole seconds (the Lease stores seconds).
//   - Run returns an error wrapping ErrLeaseLost when the lease was lost.
//   - A renewal that finds the Lease deleted or its holder cleared loses it (R7);
//     client-go's creates it again, or takes the cleared Lease back.
//   - A renewal round starts RetryPeriod after the last successful renewal was sent;
//     client-go's wait.Until starts it RetryPeriod after the last round returned.
//   - The write gate is 1.38's (`LeaderElector.WriteGate`, in its beta; the pinned
//     release has none), closing sooner: at the loss and before the release, where client-go's closes at a loss
//     only in its Recovery mode and otherwise when Run returns, after the release. It
//     checks the leader's own deadline per write; it never reopens within a term.
//   - Metrics: a provider per Elector (Config.MetricsProvider), with client-go's two
//     (leader_election_master_status, leader_election_slowpath_total) and three more;
//     client-go has one provider per process (SetProvider).
//   - Simplified: no coordinated election (LeaseCandidate, client-go's alpha
//     Coordinated mode), no Recovery mode (1.38's alpha: a leader that failed to renew
//     keeps trying to renew and may lead again; ours returns from Run), no other lock
//     types (ConfigMap and Endpoints locks are gone from client-go too), no Event
//     recorder.
package leaderelection
