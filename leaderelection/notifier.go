package leaderelection

import "sync"

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
	fn func(identity string)

	mu sync.Mutex
	// reported is the holder last queued for fn; pending are those fn has not been
	// called with yet. Guarded by mu.
	reported string
	pending  []string

	wake   chan struct{} // capacity 1: "pending is not empty"
	done   chan struct{} // closed by stop
	exited chan struct{} // closed by run when it returns
}

func newLeaderNotifier(fn func(string)) *leaderNotifier {
	return &leaderNotifier{fn: fn, wake: make(chan struct{}, 1), done: make(chan struct{}), exited: make(chan struct{})}
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
		n.fn(holder) // only queued when fn is not nil
	}
}

// stop ends run and waits for it.
func (n *leaderNotifier) stop() {
	close(n.done)
	<-n.exited
}
