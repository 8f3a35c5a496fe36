package leaderelection

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests are the guarantee doc.go states: the old leader's work is told to stop
// before any other candidate may start. Each one asserts the exact timeline and, last,
// that a's work returned before b started.

func TestAGracefulStopKeepsRenewingWhileTheWorkDrainsSoNoOtherReplicaStarts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		release bool
		nextAt  float64
	}{
		// b saw a's last renewal (40s) at its try at 41; it expires on b's clock at 56.
		{"without a release, b takes over a lease after the drain's last renewal", false, 57},
		{"with ReleaseOnCancel, b takes over at its first try after the release", true, 41},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0, s := time.Now(), newLeaseStore()
				cfg := testConfig(s.lock("a"))
				cfg.ReleaseOnCancel = tc.release
				a := run(t, t0, cfg, 0, 20*time.Second) // foo-controller-like: 20s to drain
				time.Sleep(time.Second)
				b := run(t, t0, testConfig(s.lock("b")), 0, 0)
				time.Sleep(19500 * time.Millisecond) // 20.5s: a is asked to stop
				a.stop()
				time.Sleep(20 * time.Second)
				synctest.Wait()

				renewals := seconds(0, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40)
				if tc.release {
					renewals = append(renewals, seconds(40.5)...)
				}
				assert.Equal(t, renewals, writesBy(s, t0, "a"), "S1: a renews every RetryPeriod while its work drains")
				_, ended, _, _, err := a.snapshot()
				assert.Equal(t, seconds(20.5), ended, "the first signal: the work's context ends at the stop")
				assert.Equal(t, seconds(40.5), a.workReturned(), "the work drained for 20s")
				assert.NoError(t, err)
				require.Len(t, a.workCauses(), 1)
				assert.NotErrorIs(t, a.workCauses()[0], ErrLeaseLost, "a graceful stop")
				started, _, _, _, _ := b.snapshot()
				require.Equal(t, seconds(tc.nextAt), started)
				assert.Less(t, a.workReturned()[0], started[0], "never two replicas working")
			})
		})
	}
}

func TestAStopThatArrivesWhileARoundIsFailingIsALostLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, s := time.Now(), newLeaseStore()
		a := run(t, t0, testConfig(s.lock("a")), 0, 20*time.Second)
		time.Sleep(time.Second)
		b := run(t, t0, testConfig(s.lock("b")), 0, 0)
		time.Sleep(9500 * time.Millisecond) // 10.5s: a's requests start failing
		s.failWith("a", errors.New("connection refused"))
		time.Sleep(4500 * time.Millisecond) // 15s: the round of 12s has failed at 12 and 14
		a.stop()
		time.Sleep(15 * time.Second)
		synctest.Wait()

		_, ended, _, _, err := a.snapshot()
		assert.Equal(t, seconds(15), ended)
		require.Len(t, a.workCauses(), 1)
		assert.ErrorIs(t, a.workCauses()[0], ErrLeaseLost, "S4: not a graceful stop: the lease may be gone already")
		assert.Equal(t, seconds(15), a.workReturned(), "LeaseContext ended with it: no drain")
		assert.ErrorIs(t, err, ErrLeaseLost)
		started, _, _, _, _ := b.snapshot()
		require.Equal(t, seconds(27), started, "a's last write (10s) seen at 11, expired at 26")
		assert.Less(t, a.workReturned()[0], started[0])
	})
}

func TestARenewalThatFailsDuringTheDrainStopsTheWorkAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, s := time.Now(), newLeaseStore()
		a := run(t, t0, testConfig(s.lock("a")), 0, 20*time.Second)
		time.Sleep(time.Second)
		b := run(t, t0, testConfig(s.lock("b")), 0, 0)
		time.Sleep(19500 * time.Millisecond) // 20.5s: a graceful stop; a drains
		a.cancel()
		time.Sleep(4500 * time.Millisecond) // 25s: a's requests start failing
		s.failWith("a", errors.New("connection refused"))
		<-a.done
		time.Sleep(20 * time.Second)
		synctest.Wait()

		assert.Equal(t, seconds(0, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24), writesBy(s, t0, "a"))
		_, ended, _, _, err := a.snapshot()
		assert.Equal(t, seconds(20.5), ended, "the first signal: graceful")
		assert.Equal(t, seconds(26), a.workReturned(),
			"S4: the renewal of 26s failed; LeaseContext, the second signal, ended the drain at once")
		assert.ErrorIs(t, err, ErrLeaseLost)
		started, _, _, _, _ := b.snapshot()
		require.Equal(t, seconds(41), started, "a's last write (24s) seen at 25, expired at 40")
		assert.Less(t, a.workReturned()[0], started[0])
	})
}

func TestTheLeaderStopsWithinALeaseOfSendingItsLastSuccessfulRenewal(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func(Config) Config
		// cut is what happens to a, and when.
		cut    func(s *leaseStore)
		cutAt  time.Duration
		prep   func(s *leaseStore)
		prepAt time.Duration
		// endedAt is when a's work context ends; startedAt when b starts.
		endedAt, startedAt float64
	}{
		{
			// R4 would come at 12+10 = 22s, after b's takeover at 21s (b saw the 8s
			// renewal at 9s: expired at 20s). R6 comes first: 8s + 11s − 1.1s.
			name: "a config New accepts, 11s lease, 10s renew deadline, 4s retry",
			cfg: func(c Config) Config {
				c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = 11*time.Second, 10*time.Second, 4*time.Second
				return c
			},
			cut: func(s *leaseStore) { s.partition("a", true) }, cutAt: 8500 * time.Millisecond,
			endedAt: 17.9, startedAt: 21,
		},
		{
			// The renewal sent at 10s is committed at once but answered at 18s; b saw it
			// at 11s. a is cut off at 17.5s, so its next round (at once, at 18s: the
			// answer came after 10s + RetryPeriod) fails. A round deadline timed from
			// that round would give up at 28s, after b's takeover at 27s. Timed from
			// the send: 10s + 15s − 1.5s.
			name:   "a renewal committed at once and answered 8s later",
			cfg:    func(c Config) Config { return c },
			prep:   func(s *leaseStore) { s.slowResponses("a", 8*time.Second) },
			prepAt: 9500 * time.Millisecond,
			cut:    func(s *leaseStore) { s.partition("a", true) }, cutAt: 17500 * time.Millisecond,
			endedAt: 23.5, startedAt: 27,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0, s := time.Now(), newLeaseStore()
				a := run(t, t0, tc.cfg(testConfig(s.lock("a"))), 0, 0)
				time.Sleep(time.Second)
				b := run(t, t0, tc.cfg(testConfig(s.lock("b"))), 0, 0)
				if tc.prep != nil {
					time.Sleep(tc.prepAt - time.Since(t0))
					tc.prep(s)
				}
				time.Sleep(tc.cutAt - time.Since(t0))
				tc.cut(s)
				time.Sleep(40*time.Second - time.Since(t0))
				synctest.Wait()

				_, ended, _, _, err := a.snapshot()
				require.Equal(t, seconds(tc.endedAt), ended, "R6: a's own deadline, from the send")
				assert.ErrorIs(t, err, ErrLeaseLost)
				assert.ErrorIs(t, a.workCauses()[0], ErrLeaseLost)
				started, _, _, _, _ := b.snapshot()
				require.Equal(t, seconds(tc.startedAt), started)
				assert.Less(t, a.workReturned()[0], started[0], "the leader stops first")
			})
		})
	}
}

func TestALeaderThatReadsAnotherHolderStopsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, s := time.Now(), newLeaseStore()
		var events []string
		cfg := testConfig(s.lock("a"))
		cfg.Tracer = recordSentences(&events)
		a := run(t, t0, cfg, 0, 0)
		time.Sleep(5500 * time.Millisecond)
		s.set(Record{Holder: "x", LeaseDurationSeconds: 15, AcquireTime: time.Now(), RenewTime: time.Now(), Transitions: 1})
		time.Sleep(15 * time.Second)
		synctest.Wait()

		_, ended, _, leaders, err := a.snapshot()
		assert.Equal(t, seconds(6), ended,
			"R5: the renewal of 6s read x's unexpired lease; waiting for the renew deadline (16s) would only let a work beside x")
		assert.ErrorIs(t, err, ErrLeaseLost)
		assert.Contains(t, err.Error(), "held by x")
		assert.Equal(t, []string{"a", "x"}, leaders)
		assert.Equal(t, "x", s.record().Holder)
		assert.Contains(t, events, "lost default/lease (R5) 2000.000ms after the last successful renewal was sent: held by x, not expired on this candidate's clock")
	})
}

func TestABlockingOnNewLeaderHangsNeitherRunNorOnStoppedLeading(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newLeaseStore()
		unblock := make(chan struct{})
		var mu sync.Mutex
		var calls []string
		record := func(what string) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, what)
		}
		var logs bytes.Buffer
		cfg := testConfig(s.lock("a"))
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		cfg.Callbacks = Callbacks{
			OnStartedLeading: func(ctx context.Context) { <-ctx.Done() },
			OnNewLeader: func(id string) {
				record("new leader " + id)
				<-unblock
				record("new leader " + id + " returned")
			},
			OnStoppedLeading: func() { record("stopped leading") },
		}
		e, err := New(cfg)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = e.Run(ctx) }()
		time.Sleep(5 * time.Second)
		s.set(Record{Holder: "x", LeaseDurationSeconds: 15, AcquireTime: time.Now(), RenewTime: time.Now(), Transitions: 1})
		time.Sleep(time.Second) // a reads x at 6s: a second OnNewLeader is queued behind the blocked one
		cancel()
		time.Sleep(10 * time.Second)
		synctest.Wait()

		select {
		case <-done:
		default:
			t.Fatal("Run has not returned 10s after its context ended: a blocked OnNewLeader hangs it")
		}
		close(unblock)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, []string{"new leader a", "stopped leading", "new leader a returned"}, calls,
			"OnStoppedLeading ran although OnNewLeader had not returned; the queued call for x was dropped, never made after OnStoppedLeading")
		assert.Contains(t, logs.String(), "OnNewLeader has not returned")
	})
}

// TestALeaseChangedByANonCandidateEndsTheLeadersWorkAtItsNextRenewal: the guarantee
// assumes only candidates write the Lease. When someone else deletes it (kubectl delete
// lease, to force a re-election) or clears its holder, a standby may take it at its next
// try; the leader stops at its next renewal (R7, or R5 when the standby was first), so
// the two overlap by at most RetryPeriod.
func TestALeaseChangedByANonCandidateEndsTheLeadersWorkAtItsNextRenewal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(s *leaseStore)
		standby bool // b runs, trying at 1.75, 3.75, 5.75 s …
		// the transition that ends a's work at 6 s, and when b starts (0: never)
		transition string
		bStarted   float64
	}{
		{name: "deleted, no standby", change: func(s *leaseStore) { s.remove() }, transition: "R7"},
		{name: "holder cleared, no standby", change: func(s *leaseStore) {
			s.set(Record{LeaseDurationSeconds: 15, AcquireTime: time.Now(), RenewTime: time.Now()})
		}, transition: "R7"},
		{name: "deleted, a standby creates it first", change: func(s *leaseStore) { s.remove() }, standby: true,
			transition: "R5", bStarted: 5.75},
		{name: "holder cleared, a standby takes it first", change: func(s *leaseStore) {
			s.set(Record{LeaseDurationSeconds: 15, AcquireTime: time.Now(), RenewTime: time.Now()})
		}, standby: true, transition: "R5", bStarted: 5.75},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0, s := time.Now(), newLeaseStore()
				a := run(t, t0, testConfig(s.lock("a")), 0, 0)
				var b *candidate
				if tc.standby {
					time.Sleep(1750 * time.Millisecond)
					b = run(t, t0, testConfig(s.lock("b")), 0, 0)
				}
				time.Sleep(5500*time.Millisecond - time.Since(t0))
				tc.change(s)
				time.Sleep(10 * time.Second)
				synctest.Wait()

				_, ended, _, _, err := a.snapshot()
				require.Equal(t, seconds(6), ended, "a's renewal of 6 s, the first after the change, ends its work")
				require.ErrorIs(t, err, ErrLeaseLost)
				assert.Contains(t, err.Error(), "("+tc.transition+")")
				if b == nil {
					return
				}
				started, _, _, _, _ := b.snapshot()
				require.Equal(t, seconds(tc.bStarted), started)
				assert.LessOrEqual(t, ended[0]-started[0], 2*time.Second, "the overlap is at most RetryPeriod")
			})
		})
	}
}

// TestAWorkThatReturnsByItselfKeepsLeadingUntilTheContextEnds is the porting pattern
// (`go mgr.Start(ctx); return`): the lease stays renewed, the write gate open and the
// work's context live, until Run's context ends (W1, as in client-go). The goroutine
// left behind sees its context end at the stop.
func TestAWorkThatReturnsByItselfKeepsLeadingUntilTheContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, s := time.Now(), newLeaseStore()
		cfg := testConfig(s.lock("a"))
		cfg.ReleaseOnCancel = true
		var leftBehind atomic.Int64 // when the goroutine's context ended, since t0
		cfg.Callbacks.OnStartedLeading = func(ctx context.Context) {
			go func() { <-ctx.Done(); leftBehind.Store(int64(time.Since(t0))) }()
		}
		e, err := New(cfg)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- e.Run(ctx) }()

		time.Sleep(9 * time.Second)
		assert.True(t, e.IsLeader(), "still leading 9 s after the work returned")
		assert.True(t, e.WriteGateOpen())
		assert.Zero(t, leftBehind.Load(), "the work's context is live")
		time.Sleep(500 * time.Millisecond)
		cancel()
		require.NoError(t, <-done)
		synctest.Wait()

		assert.Equal(t, seconds(9.5), []time.Duration{time.Duration(leftBehind.Load())}, "the stop ended the goroutine's context")
		assert.Equal(t, seconds(0, 0, 2, 4, 6, 8, 9.5), writesBy(s, t0, "a"), "renewed every RetryPeriod, released at the stop")
		assert.Empty(t, s.record().Holder)
	})
}

// TestRenewalsAnsweredLateDoNotTripTheOwnDeadlineWhileTheyFitBeforeIt: with 15 s / 14 s /
// 11 s, timings New accepts, each round starts RetryPeriod after the previous renewal was
// sent, so a renewal may be answered up to 13.5 − 11 = 2.5 s late. Timed from the answer,
// as client-go's wait.Until does, answers 2.4 s late would start the round of 13.4 s and
// R6 would fire at 13.5 s before its answer (15.8 s).
func TestRenewalsAnsweredLateDoNotTripTheOwnDeadlineWhileTheyFitBeforeIt(t *testing.T) {
	for _, tc := range []struct {
		late   time.Duration
		ended  []time.Duration // when a's work context ends (nil: never, within 40 s)
		writes []time.Duration
	}{
		{late: 2400 * time.Millisecond, writes: seconds(0, 0, 11, 22, 33)},
		{late: 2600 * time.Millisecond, ended: seconds(13.5), writes: seconds(0, 0, 11)},
	} {
		t.Run(fmt.Sprintf("answered %v late", tc.late), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0, s := time.Now(), newLeaseStore()
				s.slowResponses("a", tc.late)
				cfg := testConfig(s.lock("a"))
				cfg.LeaseDuration, cfg.RenewDeadline, cfg.RetryPeriod = 15*time.Second, 14*time.Second, 11*time.Second
				a := run(t, t0, cfg, 0, 0)
				time.Sleep(40 * time.Second)
				synctest.Wait()
				_, ended, _, _, err := a.snapshot()
				assert.Equal(t, tc.ended, ended)
				assert.Equal(t, tc.writes, writesBy(s, t0, "a"))
				if tc.ended != nil {
					require.ErrorIs(t, err, ErrLeaseLost)
					assert.Contains(t, err.Error(), "(R6)")
				}
			})
		})
	}
}
