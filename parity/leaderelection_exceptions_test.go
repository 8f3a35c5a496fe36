package parity

import (
	"errors"
	"testing"
	"time"

	"github.com/kubeinternals/informers/parity/internal/check"
	"github.com/stretchr/testify/require"
)

// overlapWhenCutOff runs one library's leader c1 and follower c2 on one Lease, cuts c1
// off from the apiserver for good 250ms after its renewal at +1s, and returns the
// error checkNoTwoLeaders gives (nil: never two leaders) and whether c2 took over.
//
// The follower retries every 10ms, so it sees each renewal, and the lease expire,
// within a few tens of milliseconds: whether the two terms overlap then depends only on
// when the cut-off leader stops, not on the follower's jitter. The leader renews every
// second, so client-go's follower, which compares the record's JSON at one-second
// precision, sees every renewal as a change too.
func overlapWhenCutOff(t *testing.T, start leStarter, leader leTiming, hang bool) (twoLeaders error, tookOver bool) {
	var err error
	bubble(t, &err, func() {
		var tr check.Transcript
		s := &leScript{t0: time.Now(), tm: leader, w: newLeaseWorld(), start: start, tr: &tr}
		defer s.stopAll()
		if err = s.startCandidate(); err != nil {
			return
		}
		time.Sleep(500 * time.Millisecond)
		s.tm = leTiming{leaseDuration: leader.leaseDuration, renewDeadline: 1500 * time.Millisecond, retryPeriod: 10 * time.Millisecond}
		if err = s.startCandidate(); err != nil {
			return
		}
		if !s.waitForWrite("c1", 2*time.Second) {
			err = errNoRenewal
			return
		}
		time.Sleep(250 * time.Millisecond)
		s.w.cutOff("c1", s.t0.Add(time.Hour), hang)
		time.Sleep(2*leader.leaseDuration + 2*leader.renewDeadline)
		twoLeaders = s.checkNoTwoLeaders()
		f := s.cands[1]
		f.mu.Lock()
		tookOver = len(f.started) == 1
		f.mu.Unlock()
	})
	require.NoError(t, err)
	return twoLeaders, tookOver
}

var errNoRenewal = errors.New("the leader did not renew at +1s")

// A leader cut off from the apiserver: client-go ends its work's context only when Run
// returns — RenewDeadline after its failed round began, and, with ReleaseOnCancel,
// after its release attempt too, which hangs up to another RenewDeadline — so a
// follower can take over while it still leads. Ours tells the work to stop at its own
// deadline, LeaseDuration·0.9 after it sent its last renewal (R6), or when the round
// fails (R4), before releasing: never two leaders.
//
// Case 1: RetryPeriod + RenewDeadline (2.9s) beyond LeaseDuration (2s).
// Case 2: within it, as TestLeaderElection's timings are, but with ReleaseOnCancel and
// requests that hang: RetryPeriod + 2·RenewDeadline (4.4s) beyond LeaseDuration (4s).
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.Run
// client-go: tools/leaderelection/leaderelection.go LeaderElector.renew
var _ = exception("docs/parity.md", "Differences found by the suite", "a leader cut off from the apiserver", func(t *testing.T) {
	cases := []struct {
		name   string
		leader leTiming
		hang   bool
	}{
		{"renew deadline past the lease", leTiming{leaseDuration: 2 * time.Second, renewDeadline: 1900 * time.Millisecond, retryPeriod: time.Second}, false},
		{"release that hangs", leTiming{leaseDuration: 4 * time.Second, renewDeadline: 1700 * time.Millisecond, retryPeriod: time.Second, release: true}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			two, took := overlapWhenCutOff(t, startClientGo, c.leader, c.hang)
			require.True(t, took, "client-go: the follower took over")
			require.ErrorContains(t, two, "two leaders at once", "client-go")
			two, took = overlapWhenCutOff(t, startOurs, c.leader, c.hang)
			require.True(t, took, "ours: the follower took over")
			require.NoError(t, two, "ours")
		})
	}
})
