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
//	                                                  │ renew round every RetryPeriod:
//	                                                  │ R1 fast write, R2 read+write,
//	                                                  │ R3 retry until RenewDeadline
//	                         R4 deadline passed ◀─────┤
//	                         S1 ctx ended ◀───────────┘
//	                              │ end the work's context, wait for it,
//	                              ▼ S2 release (ReleaseOnCancel), S3 OnStoppedLeading
//	                           STOPPED
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
//   - R4 no attempt succeeded within RenewDeadline of the round's start → leadership
//     is lost: the work's context ends and Run returns ErrLeaseLost.
//
// STOPPING
//
//   - S1 Run's context ended while leading.
//   - S2 with ReleaseOnCancel, once the work returned: clear the holder (lease
//     duration 1s), so the next candidate's next try takes over.
//   - S3 OnStoppedLeading, whether or not this candidate ever led.
//   - O1 (any state) the holder this candidate observes changed → OnNewLeader.
//
// # Invariants
//
//   - RenewDeadline < LeaseDuration (New refuses otherwise): a leader cut off from
//     the apiserver stops working before any other candidate's clock lets it start.
//   - Run ends the work's context and waits for OnStartedLeading to return before it
//     releases the lease or calls OnStoppedLeading.
//   - A release writes only over a Lease that, as just read, names this candidate.
//
// What is not guaranteed: a leader whose process is paused (SIGSTOP, a long GC pause,
// a frozen VM) for longer than the lease believes it still leads when it wakes, while
// another replica already does — until its next renewal fails. Leader election bounds
// that window; it does not close it. The writes' own resourceVersion preconditions do.
//
// # Reading order
//
//  1. record.go — Record, the Lease spec without pointers.
//  2. lock.go — the Lock interface and LeaseLock (GET, POST, PUT with the precondition).
//  3. config.go — Config, Callbacks, the defaults and their validation.
//  4. elector.go — Elector: what it observed and when, IsLeader, Check.
//  5. attempt.go — tryAcquireOrRenew: A1–A4, R1, R2.
//  6. run.go — Run: the acquire loop, renewal rounds, release.
//  7. notifier.go, trace.go — OnNewLeader in order; the trace events.
//
// # Differences from client-go
//
//   - Run waits for OnStartedLeading to return before releasing the lease and before
//     calling OnStoppedLeading; client-go starts it in a goroutine it never waits for,
//     and (after a failed renewal) releases the lease before the work's context ends.
//     Ours keeps a graceful handover from ever having two replicas working.
//   - release reads the Lease and writes only if it still names this candidate;
//     client-go checks its last observation, which may be stale after failed renewals.
//   - A change of the Lease is detected by comparing records at the Lease's microsecond
//     precision; client-go compares their JSON, where times have one-second precision.
//   - OnNewLeader is called in order on one goroutine; client-go starts a goroutine per
//     call. OnStoppedLeading is optional.
//   - Zero durations mean 15s/10s/2s (kube-controller-manager's defaults); client-go
//     requires all three. LeaseDuration must be whole seconds (the Lease stores seconds).
//   - Run returns an error wrapping ErrLeaseLost when the lease was lost.
//   - Simplified: no coordinated election (LeaseCandidate, client-go's alpha
//     Coordinated mode), no other lock types (ConfigMap and Endpoints locks are gone
//     from client-go too), no Event recorder, no leader-election metrics.
package leaderelection
