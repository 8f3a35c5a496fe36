package informer

// syncTracker answers "has this handler seen the initial list?": true once the
// informer has synced (upstream) and every initial-list add queued for the handler
// has been handled. It is not safe for concurrent use; the listener guards it.
//
// Why per handler: informer.HasSynced only says the cache is filled. A handler added
// later, or a slow one, may still be working through its initial adds; a controller
// that starts workers on informer.HasSynced alone can act on a partial view
// (kubernetes/kubernetes#113763).
//
// client-go: tools/cache/synctrack/synctrack.go SingleFileTracker
type syncTracker struct {
	// pending counts initial-list adds queued but not yet handled, plus one while a
	// late registration's replay is still being queued (listener.holdSync).
	pending  int
	upstream bool // the informer has synced
	// synced is closed once, when upstream && pending == 0.
	synced chan struct{}
	// closedSynced records that synced has been closed.
	closedSynced bool
}

func newSyncTracker() syncTracker { return syncTracker{synced: make(chan struct{})} }

func (s *syncTracker) start()          { s.pending++ }
func (s *syncTracker) finished()       { s.pending--; s.check() }
func (s *syncTracker) upstreamSynced() { s.upstream = true; s.check() }

func (s *syncTracker) check() {
	if s.upstream && s.pending == 0 && !s.closedSynced {
		s.closedSynced = true
		close(s.synced)
	}
}

func (s *syncTracker) hasSynced() bool { return s.closedSynced }
