package deltafifo

// initialSync answers "has the consumer seen the first list yet?" — the question
// behind every informer's HasSynced and WaitForCacheSync.
//
// The rule, shared by both queues: the queue is synced once it is populated and
// the items counted at population time have all been popped. Populated means
// either the first Replace ran (and counted what it queued), or an Add, Update or
// Delete came first (and counted nothing: a queue fed only by watch events has no
// "initial list" to wait for).
//
// Invariant: every field is guarded by the owning queue's mu; the methods end in
// Locked because they must be called with it held.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFO.checkSynced_locked
// client-go: tools/cache/the_real_fifo.go RealFIFO.checkSynced_locked
type initialSync struct {
	// populated is set by the first Replace, or by an Add, Update or Delete before it.
	populated bool
	// remaining counts the initial items not yet fully processed
	// (client-go's initialPopulationCount).
	remaining int
	// done is closed exactly once, when populated && remaining == 0 first holds.
	// HasSynced reads it without the lock.
	done chan struct{}
	// closed records that done has been closed, so it is closed only once.
	closed bool
}

func newInitialSync() initialSync {
	return initialSync{done: make(chan struct{})}
}

// markPopulatedLocked records an Add, Update or Delete: from now on, the queue has
// no initial list to wait for (beyond what a Replace already counted).
func (s *initialSync) markPopulatedLocked() {
	if s.populated {
		return
	}
	s.populated = true
	s.checkLocked()
}

// firstReplaceLocked records that Replace queued n items. Only the first Replace,
// and only if nothing populated the queue before it, sets the count.
func (s *initialSync) firstReplaceLocked(n int) {
	if s.populated {
		return
	}
	s.populated = true
	s.remaining = n
	s.checkLocked()
}

// poppedLocked subtracts n popped items from the initial count. It does not close
// done; the caller calls checkLocked once the items are processed.
func (s *initialSync) poppedLocked(n int) {
	s.remaining = max(s.remaining-n, 0)
}

// checkLocked closes done the first time the queue is synced.
func (s *initialSync) checkLocked() {
	if !s.closed && s.populated && s.remaining == 0 {
		s.closed = true
		close(s.done)
	}
}

// syncedLocked reports whether done has been closed. Pop uses it to compute
// isInInitialList before it pops.
func (s *initialSync) syncedLocked() bool { return s.closed }

// hasSynced reports whether done is closed. It needs no lock: a closed channel is
// safe to observe from any goroutine.
func (s *initialSync) hasSynced() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}
