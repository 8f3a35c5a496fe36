package leaderelection

import "time"

// TakeoverWindow says how long the work stays undone when a leader stops, for
// candidates that all run with c's timings (zero durations mean the defaults, as in
// Run):
//
//   - after a crash, or any stop that releases nothing, another candidate starts
//     leading between crashEarliest and crashLatest after the leader stopped. It
//     takes over at its first try LeaseDuration after it saw the Lease last change;
//     it saw the leader's last renewal at its first try after it, at most
//     RetryPeriod·(1+JitterFactor) later, and that renewal came at most one
//     RetryPeriod before the crash. So the window is LeaseDuration − RetryPeriod to
//     LeaseDuration + 2·RetryPeriod·(1+JitterFactor): 13 s to 23.8 s with the
//     defaults.
//   - after a release (ReleaseOnCancel), it starts at its next try: at most
//     afterRelease = RetryPeriod·(1+JitterFactor) after the release, 4.4 s with the
//     defaults.
//
// The window counts the elector's own waits only: the requests' latency and a
// process's start are added to it, and a clock that runs fast or slow stretches it.
// TestATakeoverComesWithinItsWindow checks it against the elector.
func (c Config) TakeoverWindow() (crashEarliest, crashLatest, afterRelease time.Duration) {
	lease, retry := c.LeaseDuration, c.RetryPeriod
	if lease == 0 {
		lease = DefaultLeaseDuration
	}
	if retry == 0 {
		retry = DefaultRetryPeriod
	}
	maxWait := retry + time.Duration(JitterFactor*float64(retry))
	return lease - retry, lease + 2*maxWait, maxWait
}
