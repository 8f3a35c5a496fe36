package leaderelection

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// leaderNotifier calls OnNewLeader, in order, on one goroutine, each time the holder
// this candidate observes changes.
//
// Why a goroutine: the callback is user code and may be slow; called inline it would
// delay the next renewal. client-go starts a new goroutine per call, so two quick
// changes may reach the callback in either order; one goroutine keeps them in order
// and lets Run wait for it.
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.maybeReportTransition
type leaderNotifier struct {
	fn  func(identity string)
	log *slog.Logger

	mu sync.Mutex
	// reported is the holder last queued for fn; pending are those fn has not been
	// called with yet. Guarded by mu.
	reported string
	pending  []string

	wake   chan struct{} // capacity 1: "pending is not empty"
	done   chan struct{} // closed by stop
	exited chan struct{} // closed by run when it returns
	// abandoned is set by stop when it gave up waiting: no call starts after it.
	abandoned atomic.Bool
}

func newLeaderNotifier(fn func(string), log *slog.Logger) *leaderNotifier {
	return &leaderNotifier{fn: fn, log: log, wake: make(chan struct{}, 1), done: make(chan struct{}), exited: make(chan struct{})}
}

// report queues holder for fn if it differs from the last one reported, and says
// whether it did. The holder is "" when the lease was released and nobody took it
// yet (client-go reports that too). Transition O1.
func (n *leaderNotifier) report(holder string) bool {
	n.mu.Lock()
	if holder == n.reported {
		n.mu.Unlock()
		return false
	}
	n.reported = holder
	if n.fn != nil {
		n.pending = append(n.pending, holder)
	}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
	return true
}

// run calls fn for each queued holder until stop; it delivers what is queued before it
// returns.
func (n *leaderNotifier) run() {
	defer close(n.exited)
	for {
		select {
		case <-n.wake:
			n.deliver()
		case <-n.done:
			n.deliver()
			return
		}
	}
}

func (n *leaderNotifier) deliver() {
	n.mu.Lock()
	batch := n.pending
	n.pending = nil
	n.mu.Unlock()
	for _, holder := range batch {
		if n.abandoned.Load() {
			return
		}
		n.fn(holder) // only queued when fn is not nil
	}
}

// stop ends run: it waits up to bound for the calls still queued, then gives up on
// them with a warning — a call in progress finishes on its own goroutine, and no call
// starts after stop returned (so none comes after OnStoppedLeading).
//
// Why a bound: OnNewLeader is user code; one that blocks must not keep Run from
// returning, nor OnStoppedLeading from being called.
func (n *leaderNotifier) stop(bound time.Duration) {
	close(n.done)
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-n.exited:
	case <-t.C:
		n.abandoned.Store(true)
		n.log.Warn("OnNewLeader has not returned; Run goes on without it, and the calls still queued are dropped",
			"waited", bound)
	}
}
