package trace

import (
	"slices"
	"sync"
)

// Recorder keeps events in memory, in the order they were reported. Its Record
// method is a Sink. The zero value is ready to use and keeps every event; set Max to
// keep only the most recent ones.
type Recorder struct {
	// Max bounds how many events are kept (the oldest go first). 0 means no bound.
	// Set it before the first Record.
	Max int

	mu sync.Mutex
	// events and oldest are guarded by mu. Until events holds Max events (or always,
	// with no Max) it is in order. Once full it is a ring: a new event overwrites the
	// oldest, at index oldest, and oldest moves on.
	//
	// Why a ring: dropping the oldest by shifting the rest copies the buffer; done a
	// quarter at a time, as this was first written, it still copied three events for
	// every one recorded once full.
	events []Event
	oldest int
}

// Record appends e. It is the Sink to pass to New: trace.New(rec.Record).
func (r *Recorder) Record(e Event) {
	r.mu.Lock()
	if r.Max > 0 && len(r.events) >= r.Max {
		r.events[r.oldest] = e
		r.oldest = (r.oldest + 1) % len(r.events)
	} else {
		r.events = append(r.events, e)
	}
	r.mu.Unlock()
}

// Events returns a copy of the events kept so far.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Concat(r.events[r.oldest:], r.events[:r.oldest])
}

// Reset forgets every event kept so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.events, r.oldest = nil, 0
	r.mu.Unlock()
}
