package parity

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	le "github.com/kubeinternals/informers/leaderelection"
	"github.com/kubeinternals/informers/parity/internal/check"
	cgle "k8s.io/client-go/tools/leaderelection"
	"k8s.io/klog/v2"
)

// leCand is one candidate — one replica running one library's elector — and what its
// callbacks were seen doing, in fake time. After a crash nothing it does is recorded:
// the process is gone.
type leCand struct {
	id      string
	cancel  context.CancelFunc
	done    chan struct{} // closed when Run returned
	startAt time.Time

	mu       sync.Mutex
	crashed  bool        // guarded by mu
	started  []time.Time // OnStartedLeading calls; guarded by mu
	ended    []time.Time // when their context ended (or the crash); guarded by mu
	reported []string    // OnNewLeader calls; guarded by mu
	stopped  int         // OnStoppedLeading calls; guarded by mu
	returned time.Time   // when Run returned; guarded by mu
}

func (c *leCand) record(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.crashed {
		f()
	}
}

// leading reports whether its work runs now.
func (c *leCand) leading() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.started) > len(c.ended)
}

// live reports whether its Run has not returned and it did not crash.
func (c *leCand) live() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.crashed && c.returned.IsZero()
}

// liveAt reports whether it was live at instant at (started, Run not yet returned).
func (c *leCand) liveAt(at time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.startAt.After(at) && (c.returned.IsZero() || c.returned.After(at))
}

// work is the OnStartedLeading both libraries run: it leads until its context ends.
func (c *leCand) work(ctx context.Context) {
	c.record(func() { c.started = append(c.started, time.Now()) })
	<-ctx.Done()
	c.record(func() { c.ended = append(c.ended, time.Now()) })
}

func (c *leCand) newLeader(id string) { c.record(func() { c.reported = append(c.reported, id) }) }

func (c *leCand) stoppedLeading() { c.record(func() { c.stopped++ }) }

// leStarter starts one library's elector for c in world w, in a goroutine that closes
// c.done when Run returns.
type leStarter func(ctx context.Context, w *leaseWorld, tm leTiming, c *leCand) error

func startOurs(ctx context.Context, w *leaseWorld, tm leTiming, c *leCand) error {
	e, err := le.New(le.Config{
		Lock:          &ourLeaseLock{w: w, id: c.id},
		LeaseDuration: tm.leaseDuration, RenewDeadline: tm.renewDeadline, RetryPeriod: tm.retryPeriod,
		ReleaseOnCancel: tm.release,
		Callbacks:       le.Callbacks{OnStartedLeading: c.work, OnStoppedLeading: c.stoppedLeading, OnNewLeader: c.newLeader},
		Logger:          quiet,
	})
	if err != nil {
		return err
	}
	go func() {
		defer close(c.done)
		_ = e.Run(ctx) // a loss is seen in the callbacks; the error says the same
		c.record(func() { c.returned = time.Now() })
	}()
	return nil
}

func startClientGo(ctx context.Context, w *leaseWorld, tm leTiming, c *leCand) error {
	e, err := cgle.NewLeaderElector(cgle.LeaderElectionConfig{
		Lock:          &cgLeaseLock{w: w, id: c.id},
		LeaseDuration: tm.leaseDuration, RenewDeadline: tm.renewDeadline, RetryPeriod: tm.retryPeriod,
		ReleaseOnCancel: tm.release,
		Name:            "parity",
		Callbacks: cgle.LeaderCallbacks{OnStartedLeading: c.work, OnStoppedLeading: c.stoppedLeading,
			OnNewLeader: c.newLeader},
	})
	if err != nil {
		return err
	}
	go func() {
		defer close(c.done)
		e.Run(klog.NewContext(ctx, quietKlog))
		c.record(func() { c.returned = time.Now() })
	}()
	return nil
}

// runLEScript plays ops against one library in a synctest bubble and writes what it saw.
func runLEScript(t *testing.T, start leStarter, ops []leOp) (tr check.Transcript, err error) {
	tm := defaultLETiming
	for _, op := range ops {
		if op.kind == "timing" {
			tm = op.timing
			break
		}
	}
	bubble(t, &err, func() {
		s := &leScript{t0: time.Now(), tm: tm, w: newLeaseWorld(), start: start, tr: &tr}
		defer s.stopAll()
		if err = s.run(ops); err != nil {
			return
		}
		err = s.checkNoTwoLeaders()
	})
	return tr, err
}

// leScript is one library's run of a script.
type leScript struct {
	t0    time.Time
	tm    leTiming
	w     *leaseWorld
	start leStarter
	tr    *check.Transcript
	cands []*leCand
}

func (s *leScript) since(at time.Time) time.Duration { return at.Sub(s.t0) }

func (s *leScript) startCandidate() error {
	c := &leCand{id: fmt.Sprintf("c%d", len(s.cands)+1), done: make(chan struct{}), startAt: time.Now()}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	if err := s.start(ctx, s.w, s.tm, c); err != nil {
		cancel()
		return err
	}
	s.cands = append(s.cands, c)
	return nil
}

// stopAll ends every candidate still running and waits for its Run, so the bubble's
// goroutines exit.
func (s *leScript) stopAll() {
	for _, c := range s.cands {
		c.cancel()
		<-c.done
	}
	synctest.Wait()
}

// settle is long enough for anything a step set off to finish: an outage to end, the
// failed round to give up, the lease to expire, a follower to see it and take over
// (each up to a jittered retry late), and every live candidate to look once more.
func (s *leScript) settle(op leOp) time.Duration {
	rp := s.tm.retryPeriod
	return op.after + op.d + rp + s.tm.renewDeadline + s.tm.leaseDuration + 7*rp + time.Second
}

func (s *leScript) leader() *leCand {
	for _, c := range s.cands {
		if c.live() && c.leading() {
			return c
		}
	}
	return nil
}

func (s *leScript) run(ops []leOp) error {
	if err := s.startCandidate(); err != nil {
		return err
	}
	synctest.Wait()
	if c := s.leader(); c != nil && c.id == "c1" {
		s.tr.Printf("c1 leads from +%v", s.since(c.started[0]))
	} else {
		s.tr.Printf("c1 does not lead at once")
	}
	for _, op := range ops {
		if op.kind == "timing" {
			s.tr.Printf("%s", op)
			continue
		}
		s.tr.Printf("%s", op)
		from := time.Now()
		acted, err := s.play(op)
		if err != nil {
			return err
		}
		time.Sleep(s.settle(op))
		synctest.Wait()
		if err := s.observe(from, acted); err != nil {
			return err
		}
	}
	return nil
}

// play does one step; it returns the leader it acted on, if any.
func (s *leScript) play(op leOp) (*leCand, error) {
	if op.kind == "start" {
		live := 0
		for _, c := range s.cands {
			if c.live() {
				live++
			}
		}
		if live == 3 {
			s.tr.Printf("  (three live candidates already; none started)")
			return nil, nil
		}
		return nil, s.startCandidate()
	}
	l := s.leader()
	if l == nil {
		s.tr.Printf("  (no leader)")
		return nil, nil
	}
	// Align the step on the leader's next renewal: renewals are not jittered, so
	// everything measured from it is the same in both libraries.
	if !s.waitForWrite(l.id, 2*s.tm.retryPeriod+s.tm.renewDeadline) {
		s.tr.Printf("  the leader did not renew")
		return l, nil
	}
	time.Sleep(op.after)
	switch op.kind {
	case "crash":
		// The process dies: no request of it reaches the apiserver again (a release
		// included), and nothing it does afterwards is observed.
		s.w.cutOff(l.id, s.t0.Add(100*365*24*time.Hour), false)
		l.mu.Lock()
		l.crashed = true
		if len(l.started) > len(l.ended) {
			l.ended = append(l.ended, time.Now())
		}
		l.mu.Unlock()
		l.cancel()
	case "cancel":
		l.cancel()
	case "pause":
		hang := op.hang
		if hang && s.tm.release {
			// After a loss client-go tries to release before it ends the work's
			// context, so a release that hangs keeps its leader working up to another
			// RenewDeadline; ours ends the work first. That is the exception "a leader
			// that cannot renew" (leaderelection_exceptions_test.go); here the
			// requests fail at once instead.
			hang = false
			s.tr.Printf("  (requests fail at once: with ReleaseOnCancel a hanging release is the exception)")
		}
		s.w.cutOff(l.id, time.Now().Add(op.d), hang)
	}
	return l, nil
}

// waitForWrite waits until id writes the Lease, at most limit; it returns at the
// instant of the write.
func (s *leScript) waitForWrite(id string, limit time.Duration) bool {
	seen, _ := s.w.history()
	n := len(seen)
	deadline := time.After(limit)
	for {
		writes, changed := s.w.history()
		for _, wr := range writes[n:] {
			if wr.by == id {
				return true
			}
		}
		n = len(writes)
		select {
		case <-changed:
		case <-deadline:
			return false
		}
	}
}
