package leaderelection

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheDefaultTakeoverWindowIsThirteenToTwentyFourPointEightSeconds(t *testing.T) {
	earliest, latest, afterRelease := Config{}.TakeoverWindow()
	assert.Equal(t, 13*time.Second, earliest)
	assert.Equal(t, 23800*time.Millisecond, latest)
	assert.Equal(t, 4400*time.Millisecond, afterRelease)
}

// TestATakeoverComesWithinItsWindow crashes (or stops with a release) a leader at
// several points between two renewals, with the other candidate's jitter at its least
// and its most, and measures when the other starts leading.
func TestATakeoverComesWithinItsWindow(t *testing.T) {
	for _, release := range []bool{false, true} {
		for _, stopAt := range []time.Duration{20 * time.Second, 20500 * time.Millisecond, 21900 * time.Millisecond} {
			for _, jitter := range []float64{0, 0.5, 0.999} {
				t.Run(fmt.Sprintf("release=%v/stop=%v/jitter=%v", release, stopAt, jitter), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						t0, s := time.Now(), newLeaseStore()
						cfg := testConfig(s.lock("a"))
						cfg.ReleaseOnCancel = release
						a := run(t, t0, cfg, 0, 0)
						time.Sleep(time.Second)
						b := run(t, t0, testConfig(s.lock("b")), jitter, 0)
						time.Sleep(stopAt - time.Second)
						a.stop()
						time.Sleep(30 * time.Second)
						synctest.Wait()

						started, _, _, _, _ := b.snapshot()
						require.Len(t, started, 1, "b took over")
						took := started[0] - stopAt
						t.Logf("took over %v after the stop", took)
						earliest, latest, afterRelease := cfg.TakeoverWindow()
						if release {
							assert.LessOrEqual(t, took, afterRelease, "one try after the release")
							return
						}
						assert.GreaterOrEqual(t, took, earliest)
						assert.LessOrEqual(t, took, latest)
					})
				})
			}
		}
	}
}
