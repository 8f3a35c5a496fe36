package soak

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"
)

// A story is what one handler was told, checked as it is told: each notification must
// follow from the handler's own view of the objects so far, the way a controller
// relies on it. An add is for an object the handler does not have; an update's old
// object is the one it has, and its new one is not older; a delete is for an object it
// has, and a tombstone carries the state it has. Every resourceVersion it hears of is
// kept, to be checked against what was really written (checkpoint).
type story struct {
	name  string        // the informer's and the handler's, e.g. "ours default via A / slow"
	delay time.Duration // how long each notification takes: zero for the fast handler

	mu            sync.Mutex
	view          map[string]string          // key → resourceVersion the handler holds; guarded by mu
	heard         map[string]map[string]bool // key → every resourceVersion an add or update carried; guarded by mu
	notifications int                        // guarded by mu
	tombstones    int                        // guarded by mu
	violations    []string                   // guarded by mu
}

func newStory(name string, delay time.Duration) *story {
	return &story{name: name, delay: delay, view: map[string]string{}, heard: map[string]map[string]bool{}}
}

func (s *story) added(key, rv string) {
	s.told(func() {
		if have, ok := s.view[key]; ok {
			s.violatedLocked("add of %s@%s, which it holds at %s", key, rv, have)
		}
		s.holdLocked(key, rv)
	})
}

func (s *story) updated(key, oldRV, newRV string) {
	s.told(func() {
		have, ok := s.view[key]
		switch {
		case !ok:
			s.violatedLocked("update of %s (%s → %s), which it does not hold", key, oldRV, newRV)
		case have != oldRV:
			s.violatedLocked("update of %s from %s, but it holds %s", key, oldRV, have)
		case older(newRV, oldRV):
			s.violatedLocked("update of %s back in time, %s → %s", key, oldRV, newRV)
		}
		s.holdLocked(key, newRV)
	})
}

// deleted records a delete. rv is the deleted object's resourceVersion ("" when
// client-go's tombstone carries no object); tombstone says the informer inferred it.
func (s *story) deleted(key, rv string, tombstone bool) {
	s.told(func() {
		have, ok := s.view[key]
		switch {
		case !ok:
			s.violatedLocked("delete of %s, which it does not hold", key)
		case tombstone && rv != "" && rv != have:
			s.violatedLocked("tombstone of %s carries %s, but it holds %s", key, rv, have)
		case !tombstone && older(rv, have):
			s.violatedLocked("delete of %s carries %s, older than the %s it holds", key, rv, have)
		}
		if tombstone {
			s.tombstones++
		}
		delete(s.view, key)
	})
}

func (s *story) told(check func()) {
	if s.delay > 0 {
		time.Sleep(s.delay) // the slow handler's work: the backlog it builds is the point
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notifications++
	check()
}

func (s *story) holdLocked(key, rv string) {
	s.view[key] = rv
	if s.heard[key] == nil {
		s.heard[key] = map[string]bool{}
	}
	s.heard[key][rv] = true
}

func (s *story) violatedLocked(format string, args ...any) {
	s.violations = append(s.violations, s.name+": "+fmt.Sprintf(format, args...))
}

// snapshot returns a copy of the view and how many notifications it took.
func (s *story) snapshot() (map[string]string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.view), s.notifications
}

// unwritten returns, for every key not in uncertain, the resourceVersions the handler
// heard of that the writer never saw the object at.
func (s *story) unwritten(history map[string]map[string]bool, uncertain map[string]bool) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, key := range slices.Sorted(maps.Keys(s.heard)) {
		if uncertain[key] {
			continue
		}
		for _, rv := range slices.Sorted(maps.Keys(s.heard[key])) {
			if !history[key][rv] {
				out = append(out, fmt.Sprintf("%s: heard of %s@%s, which was never written", s.name, key, rv))
			}
		}
	}
	return out
}

// older reports whether resourceVersion a is older than b. Both are etcd revisions,
// which a client may compare only for the same object — as here.
func older(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x < y
}
