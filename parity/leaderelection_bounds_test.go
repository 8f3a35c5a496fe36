package parity

import (
	"fmt"
	"slices"
	"time"
)

// observe writes what one step led to, after it settled, and checks the bounds that
// cannot be compared exactly (see leaderelection_test.go): from is when the step began,
// acted the leader it acted on, if any.
func (s *leScript) observe(from time.Time, acted *leCand) error {
	writes, _ := s.w.history()
	now := time.Now()
	if acted != nil {
		acted.mu.Lock()
		ended := slices.IndexFunc(acted.ended, func(at time.Time) bool { return at.After(from) })
		var end time.Time
		if ended >= 0 {
			end = acted.ended[ended]
		}
		acted.mu.Unlock()
		if ended < 0 {
			s.tr.Printf("  the leader still leads")
		} else {
			last := time.Time{}
			for _, wr := range writes {
				if wr.by == acted.id && wr.holder == acted.id && !wr.at.After(end) {
					last = wr.at
				}
			}
			s.tr.Printf("  the leader stopped leading %v after its last renewal", end.Sub(last))
		}
	}
	if err := s.takeovers(from, now, writes); err != nil {
		return err
	}

	live, leading := 0, 0
	var leader *leCand
	for _, c := range s.cands {
		if c.live() {
			live++
			if c.leading() {
				leading++
				leader = c
			}
		}
	}
	s.tr.Printf("  live candidates: %d, leading: %d", live, leading)
	holder, transitions := s.w.final()
	role := "a stopped candidate"
	switch {
	case holder == "":
		role = "nobody (released)"
	case leader != nil && holder == leader.id:
		role = "the leader"
	}
	s.tr.Printf("  lease: held by %s, leaseTransitions %d", role, transitions)
	agree := 0
	for _, c := range s.cands {
		if !c.live() {
			continue
		}
		c.mu.Lock()
		if len(c.reported) > 0 && c.reported[len(c.reported)-1] == holder {
			agree++
		}
		c.mu.Unlock()
	}
	s.tr.Printf("  live candidates whose last OnNewLeader names the holder: %d of %d", agree, live)
	// OnStoppedLeading: once for every candidate whose Run returned (a crashed one is
	// not observed), in both libraries whether or not it led.
	once, returned := 0, 0
	for _, c := range s.cands {
		c.mu.Lock()
		if !c.crashed && !c.returned.IsZero() {
			returned++
			if c.stopped == 1 {
				once++
			}
		}
		c.mu.Unlock()
	}
	s.tr.Printf("  candidates whose Run returned: %d, with OnStoppedLeading called once: %d", returned, once)
	return nil
}

// takeovers writes each leadership that began in (from, to], by role, and checks that
// it began within the documented bounds of the write it replaced:
//
//   - a released Lease (no holder) is taken at the taker's next try: within one
//     jittered retry, (1+JitterFactor)·RetryPeriod, of the release or of the taker's
//     start, whichever is later;
//   - a held one only once it expired on the taker's clock: no earlier than
//     LeaseDuration after the last write (or the taker's start, if later), and no later
//     than LeaseDuration plus two jittered retries after it (one to see the write, one
//     to try after it expired).
//
// client-go: tools/leaderelection/leaderelection.go LeaderElector.isLeaseValid
// client-go: tools/leaderelection/leaderelection.go LeaderElector.acquire
func (s *leScript) takeovers(from, to time.Time, writes []leaseWrite) error {
	type begin struct {
		c  *leCand
		at time.Time
	}
	var begins []begin
	for _, c := range s.cands {
		c.mu.Lock()
		for _, at := range c.started {
			if at.After(from) && !at.After(to) {
				begins = append(begins, begin{c, at})
			}
		}
		c.mu.Unlock()
	}
	slices.SortFunc(begins, func(a, b begin) int { return a.at.Compare(b.at) })
	jittered := s.tm.retryPeriod * 22 / 10
	for _, b := range begins {
		// The write that won: the last one by the taker, not after it began, that named
		// it over a Lease naming someone else (both libraries renew at once after
		// acquiring, at the same instant).
		won := -1
		for i, wr := range writes {
			if i > 0 && wr.by == b.c.id && wr.holder == b.c.id && writes[i-1].holder != b.c.id && !wr.at.After(b.at) {
				won = i
			}
		}
		if won < 1 {
			return fmt.Errorf("%s began leading at +%v without a write that took the Lease over", b.c.id, s.since(b.at))
		}
		prev, took := writes[won-1], writes[won]
		if took.transitions != prev.transitions+1 {
			return fmt.Errorf("%s took the Lease over with leaseTransitions %d after %d", b.c.id, took.transitions, prev.transitions)
		}
		base := prev.at
		if b.c.startAt.After(base) {
			base = b.c.startAt
		}
		kind, lo, hi := "a released lease", base, base.Add(jittered)
		if prev.holder != "" {
			kind, lo, hi = "an expired lease", base.Add(s.tm.leaseDuration), base.Add(s.tm.leaseDuration+2*jittered)
		}
		if b.at.Before(lo) || b.at.After(hi) {
			return fmt.Errorf("%s took over %s (from %q, written at +%v) at +%v, outside [+%v, +%v]",
				b.c.id, kind, prev.holder, s.since(prev.at), s.since(b.at), s.since(lo), s.since(hi))
		}
		live := 0
		for _, c := range s.cands {
			if c.liveAt(b.at) {
				live++
			}
		}
		who := fmt.Sprintf("one of %d live candidates", live)
		if live == 1 {
			who = "the only live candidate"
		}
		s.tr.Printf("  %s took over %s (leaseTransitions %d), within its bounds", who, kind, took.transitions)
	}
	return nil
}

// checkNoTwoLeaders fails if two candidates' work ran at the same time: one's
// OnStartedLeading began before another's context had ended.
func (s *leScript) checkNoTwoLeaders() error {
	type term struct {
		id         string
		start, end time.Time // end zero: still leading
	}
	var terms []term
	for _, c := range s.cands {
		c.mu.Lock()
		for i, at := range c.started {
			tm := term{id: c.id, start: at}
			if i < len(c.ended) {
				tm.end = c.ended[i]
			}
			terms = append(terms, tm)
		}
		c.mu.Unlock()
	}
	slices.SortFunc(terms, func(a, b term) int { return a.start.Compare(b.start) })
	for i := 1; i < len(terms); i++ {
		prev, next := terms[i-1], terms[i]
		if prev.end.IsZero() || prev.end.After(next.start) {
			return fmt.Errorf("two leaders at once: %s led from +%v (until %s) when %s began at +%v",
				prev.id, s.since(prev.start), s.until(prev.end), next.id, s.since(next.start))
		}
	}
	return nil
}

func (s *leScript) until(end time.Time) string {
	if end.IsZero() {
		return "the end"
	}
	return fmt.Sprintf("+%v", s.since(end))
}
