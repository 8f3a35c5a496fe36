package leaderelection

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheFirstCandidateCreatesTheLeaseAndRenewsItEveryRetryPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, s := time.Now(), newLeaseStore()
		a := run(t, t0, testConfig(s.lock("a")), 0, 0)
		time.Sleep(7 * time.Second)
		synctest.Wait()

		started, _, _, leaders, _ := a.snapshot()
		assert.Equal(t, seconds(0), started, "A1: it leads as soon as it created the Lease")
		assert.Equal(t, seconds(0, 0, 2, 4, 6), writesBy(s, t0, "a"),
			"the create, a renewal at once (client-go's renew loop starts with one), then one every RetryPeriod")
		rec := s.record()
		assert.Equal(t, "a", rec.Holder)
		assert.Equal(t, 15, rec.LeaseDurationSeconds)
		assert.Equal(t, 0, rec.Transitions, "creating the Lease is not a transition")
		assert.True(t, rec.AcquireTime.Equal(t0), "a renewal keeps AcquireTime")
		assert.True(t, rec.RenewTime.Equal(t0.Add(6*time.Second)))
		assert.True(t, a.e.IsLeader())
		assert.Equal(t, []string{"a"}, leaders, "OnNewLeader is told about itself too")
	})
}

func TestAnExpiredLeaseIsTakenOverLeaseDurationAfterItLastChangedOnTheCandidatesOwnClock(t *testing.T) {
	for _, tc := range []struct {
		name       string
		renewTime  time.Duration // the holder's RenewTime, relative to our clock
		jitter     float64
		acquiredAt float64
	}{
		{"a holder whose clock is an hour behind", -time.Hour, 0, 16},
		{"a holder whose clock is an hour ahead", time.Hour, 0, 16},
		{"a holder with the same clock", 0, 0, 16},
		{"tries stretched by the full jitter: every 2s+1.2·2s", 0, 1, 17.6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0, s := time.Now(), newLeaseStore()
				s.set(Record{Holder: "gone", LeaseDurationSeconds: 15, AcquireTime: t0.Add(tc.renewTime),
					RenewTime: t0.Add(tc.renewTime), Transitions: 4})
				b := run(t, t0, testConfig(s.lock("b")), tc.jitter, 0)
				time.Sleep(20 * time.Second)
				synctest.Wait()

				started, _, _, _, _ := b.snapshot()
				assert.Equal(t, seconds(tc.acquiredAt), started,
					"A3 at the first try after 15s since b first saw the Lease, whatever its RenewTime says")
				rec := s.record()
				assert.Equal(t, "b", rec.Holder)
				assert.Equal(t, 5, rec.Transitions, "a takeover is a transition")
				assert.True(t, rec.AcquireTime.Equal(t0.Add(seconds(tc.acquiredAt)[0])))
			})
		})
	}
}

func TestACrashedLeaderIsReplacedOnlyAfterItsLeaseExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, s := time.Now(), newLeaseStore()
		a := run(t, t0, testConfig(s.lock("a")), 0, 0)
		time.Sleep(time.Second)
		b := run(t, t0, testConfig(s.lock("b")), 0, 0)

		time.Sleep(19500 * time.Millisecond) // t = 20.5s: a "crashes": it stops, releasing nothing
		a.stop()
		time.Sleep(20 * time.Second)
		synctest.Wait()

		assert.Equal(t, seconds(0, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20), writesBy(s, t0, "a"))
		started, _, _, leaders, _ := b.snapshot()
		// b saw a's last renewal (t=20) at its try at 21; the lease expires 15s later, at
		// 36, on b's clock; b's next try is at 37.
		assert.Equal(t, seconds(37), started, "A3: 16.5s after the crash")
		assert.Equal(t, []string{"a", "b"}, leaders)
		assert.Equal(t, 1, s.record().Transitions)
	})
}

func TestAGracefulLeaderReleasesTheLeaseOnlyAfterItsWorkReturned(t *testing.T) {
	for _, tc := range []struct {
		name               string
		workFor            time.Duration
		releasedAt, nextAt float64
	}{
		{"work that stops at once: released at the cancel, taken at b's next try", 0, 20.5, 21},
		{"work that takes 3s to stop: released 3s later; b waits for it", 3 * time.Second, 23.5, 25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0, s := time.Now(), newLeaseStore()
				cfg := testConfig(s.lock("a"))
				cfg.ReleaseOnCancel = true
				a := run(t, t0, cfg, 0, tc.workFor)
				time.Sleep(time.Second)
				b := run(t, t0, testConfig(s.lock("b")), 0, 0)
				time.Sleep(19500 * time.Millisecond)
				a.stop()
				time.Sleep(10 * time.Second)
				synctest.Wait()

				history := s.history()
				var release *written
				for i, w := range history {
					if w.by == "a" && w.rec.Holder == "" {
						release = &history[i]
					}
				}
				require.NotNil(t, release, "S2: a wrote a release")
				assert.Equal(t, seconds(tc.releasedAt)[0], release.at.Sub(t0))
				assert.Equal(t, 1, release.rec.LeaseDurationSeconds)
				assert.Equal(t, 0, release.rec.Transitions, "a release keeps the count")

				_, ended, stopped, _, err := a.snapshot()
				assert.Equal(t, seconds(20.5), ended, "a's work context ended at the cancel")
				assert.Equal(t, 1, stopped)
				assert.NoError(t, err, "a graceful stop is not an error")
				require.Len(t, a.workCauses(), 1)
				assert.NotErrorIs(t, a.workCauses()[0], ErrLeaseLost, "a graceful stop's cause is the caller's")
				started, _, _, _, _ := b.snapshot()
				assert.Equal(t, seconds(tc.nextAt), started)
				assert.Equal(t, 1, s.record().Transitions)
			})
		})
	}
}

func TestALeaderThatCannotRenewStopsBeforeAnyoneElseMayStart(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cutOff func(s *leaseStore)
	}{
		{"requests hang (a partition)", func(s *leaseStore) { s.partition("a", true) }},
		{"requests fail at once", func(s *leaseStore) { s.failWith("a", errors.New("connection refused")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t0, s := time.Now(), newLeaseStore()
				a := run(t, t0, testConfig(s.lock("a")), 0, 0)
				time.Sleep(time.Second)
				b := run(t, t0, testConfig(s.lock("b")), 0, 0)
				time.Sleep(9500 * time.Millisecond) // t = 10.5s
				tc.cutOff(s)
				time.Sleep(20 * time.Second)
				synctest.Wait()

				assert.Equal(t, seconds(0, 0, 2, 4, 6, 8, 10), writesBy(s, t0, "a"))
				_, ended, stopped, _, err := a.snapshot()
				// The round that starts at 12 fails until its deadline, 12+10s.
				assert.Equal(t, seconds(22), ended, "R4: a stops working at the renew deadline")
				assert.Equal(t, 1, stopped)
				assert.ErrorIs(t, err, ErrLeaseLost)
				require.Len(t, a.workCauses(), 1)
				assert.ErrorIs(t, a.workCauses()[0], ErrLeaseLost, "the work can tell a lost lease by its context's cause")
				started, _, _, _, _ := b.snapshot()
				assert.Equal(t, seconds(27), started, "b: a's last write (10s) seen at 11, expired at 26, taken at 27")
				assert.Less(t, ended[0], started[0], "never two leaders working: RenewDeadline < LeaseDuration")
			})
		})
	}
}

func TestAConcurrentWriterWinsAndTheCandidateDoesNotLead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, s := time.Now(), newLeaseStore()
		s.set(Record{LeaseDurationSeconds: 1, AcquireTime: t0, RenewTime: t0}) // released
		// x writes between a's read and a's write, once.
		raced := false
		s.beforeUpdate = func() {
			if !raced {
				raced = true
				s.set(Record{Holder: "x", LeaseDurationSeconds: 15, AcquireTime: time.Now(), RenewTime: time.Now(), Transitions: 1})
			}
		}
		var events []string
		cfg := testConfig(s.lock("a"))
		cfg.Tracer = recordSentences(&events)
		a := run(t, t0, cfg, 0, 0)
		time.Sleep(5 * time.Second)
		synctest.Wait()

		started, _, _, _, _ := a.snapshot()
		assert.Empty(t, started, "a's write was refused with 409: it does not lead")
		assert.Equal(t, "x", s.record().Holder, "x's write stands")
		assert.False(t, a.e.IsLeader())
		require.GreaterOrEqual(t, len(events), 3)
		assert.Contains(t, events[0], "tried default/lease (A4): writing the lease: Operation cannot be fulfilled")
		assert.Equal(t, "new leader x of default/lease", events[1], "its next try reads x's write")
		assert.Equal(t, "tried default/lease (A2): held by x, not expired on this candidate's clock", events[2])
	})
}

func TestOnStoppedLeadingIsCalledEvenIfTheCandidateNeverLed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, s := time.Now(), newLeaseStore()
		s.set(Record{Holder: "x", LeaseDurationSeconds: 15, AcquireTime: t0, RenewTime: t0})
		b := run(t, t0, testConfig(s.lock("b")), 0, 0)
		time.Sleep(5 * time.Second)
		b.stop()
		started, _, stopped, leaders, err := b.snapshot()
		assert.Empty(t, started)
		assert.Equal(t, 1, stopped, "client-go calls it on every return of Run")
		assert.Equal(t, []string{"x"}, leaders)
		assert.NoError(t, err)
	})
}

func TestReleaseNeverClearsAnotherCandidatesLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, s := time.Now(), newLeaseStore()
		cfg := testConfig(s.lock("a"))
		cfg.ReleaseOnCancel = true
		a := run(t, t0, cfg, 0, 0)
		time.Sleep(5 * time.Second)
		s.set(Record{Holder: "x", LeaseDurationSeconds: 15, AcquireTime: time.Now(), RenewTime: time.Now(), Transitions: 1})
		time.Sleep(500 * time.Millisecond)
		a.stop() // a still believes it leads: its last renewal (4s) succeeded
		assert.Equal(t, "x", s.record().Holder, "a read the Lease before releasing and saw x")
		assert.Equal(t, seconds(0, 0, 2, 4), writesBy(s, t0, "a"), "no release write")
	})
}

// TestReleaseRetriesWhenARenewalInFlightWasApplied: the stop races a renewal that the
// apiserver applied after the candidate stopped waiting for it, so the release's write
// names a resourceVersion that is no longer current. It reads the Lease again (still its
// own) and releases; without the retry the Lease would stay held for 15 s.
func TestReleaseRetriesWhenARenewalInFlightWasApplied(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, s := time.Now(), newLeaseStore()
		cfg := testConfig(s.lock("a"))
		cfg.ReleaseOnCancel = true
		var stopping atomic.Bool
		var once sync.Once
		s.beforeUpdate = func() {
			if stopping.Load() {
				once.Do(func() { // the renewal a gave up on, applied now
					r := s.record()
					r.RenewTime = time.Now()
					s.set(r)
				})
			}
		}
		a := run(t, t0, cfg, 0, 0)
		time.Sleep(5 * time.Second)
		stopping.Store(true)
		a.stop()
		rec := s.record()
		assert.Empty(t, rec.Holder, "the release cleared the holder")
		assert.Equal(t, 1, rec.LeaseDurationSeconds)
		assert.Equal(t, seconds(0, 0, 2, 4, 5), writesBy(s, t0, "a"), "the release was written once, after reading again")
	})
}

func TestCheckFailsWhenTheLeaderHasNotRenewedForALeaseDurationPlusTheTolerance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, s := time.Now(), newLeaseStore()
		s.set(Record{Holder: "x", LeaseDurationSeconds: 15, AcquireTime: t0, RenewTime: t0})
		a := run(t, t0, testConfig(s.lock("a")), 0, 0)
		time.Sleep(16 * time.Second) // a took over at 16
		time.Sleep(4500 * time.Millisecond)
		s.partition("a", true) // last renewal at 20; a gives up at 22+10 = 32
		assert.NoError(t, a.e.Check(time.Second))

		time.Sleep(15 * time.Second) // 35.5s: 15.5s since the last renewal
		<-a.done
		assert.True(t, a.e.IsLeader(), "a's last observation still names it: it never read the Lease again")
		assert.NoError(t, a.e.Check(time.Second), "within 15s + 1s")
		time.Sleep(time.Second) // 36.5s
		err := a.e.Check(time.Second)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "leading but the lease was last renewed 16.5s ago")

		b := run(t, t0, testConfig(s.lock("b")), 0, 0)
		synctest.Wait()
		assert.NoError(t, b.e.Check(0), "a candidate that does not lead is healthy")
	})
}
