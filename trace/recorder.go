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
	// events is guarded by mu.
	events []Event
}

// Record appends e. It is the Sink to pass to New: trace.New(rec.Record).
func (r *Recorder) Record(e Event) {
	r.mu.Lock()
	if r.Max > 0 && len(r.events) >= r.Max {
		// Why drop a quarter at once: shifting on every event would make recording
		// cost O(Max) per event.
		drop := max(r.Max/4, 1)
		r.events = append(r.events[:0], r.events[drop:]...)
	}
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of the events kept so far.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Reset forgets every event kept so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.events = nil
	r.mu.Unlock()
}
