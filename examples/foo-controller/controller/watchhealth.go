package controller

import "time"

// WatchesHealthy is the stuck-watch check of the controller's two informers, Foos and
// Deployments: nil, or an error naming each informer whose watch, once its cache
// synced, has delivered nothing (no event, no bookmark) or been down for longer than
// stuckAfter (0 or less: informer.DefaultWatchStuckAfter, 2 minutes). foo-controller
// serves it in /healthz beside Healthy, unless -watch-stuck-after is 0 or negative.
// Before Run has synced the caches it returns nil: /readyz says that.
//
// Pitfall: as a liveness probe it restarts the process when a watch is stuck, and also
// after an apiserver outage longer than stuckAfter (once: a restarted process has not
// synced, so the check passes until it has).
func (c *Controller) WatchesHealthy(stuckAfter time.Duration) error {
	return c.factory.WatchHealthy(stuckAfter)
}
