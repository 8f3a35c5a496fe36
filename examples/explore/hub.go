package main

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/kubeinternals/informers/trace"
)

// layout names the boxes the page draws, in order: the informers (by resource) and
// the handlers (by name). Boxes for other sources appear after them when their first
// event arrives.
type layout struct {
	Informers []string
	Handlers  []string
	// HandlerOf names the informer (resource) each handler is registered on.
	HandlerOf map[string]string
	Workers   int
}

// cacheSize is one informer's cache, read at snapshot time.
type cacheSize struct {
	Objects int
	Indices map[string]int // index name → number of distinct values
}

// hub is the trace sink of the explorer: it keeps the most recent events in a ring,
// folds every event into the pipeline's boxes, and wakes the page streams.
//
// Invariant: Record never blocks and never allocates per subscriber — it runs on the
// pipeline's goroutines, sometimes under their locks (see trace.Sink). A stream that
// falls behind loses the oldest events (it is told how many), never slows the pipeline.
type hub struct {
	// layout and caches are set by newHub and only read after: no lock.
	layout layout
	caches func() map[string]cacheSize // nil: no cache sizes
	// afterChunk, when set, runs each time journey has copied a chunk of the ring and
	// released mu. Tests set it before their first journey, to act mid-walk; nil in the
	// explorer. Only read after it is set: no lock.
	afterChunk func()
	// clock is the time the snapshot counts retries down at: the wall clock live, the
	// replay's clock (the last replayed event's time) in replay. Set by newHub or
	// before the first event; only read after.
	clock func() time.Time

	mu sync.Mutex
	// ring holds the last len(ring) events; the event numbered seq is at
	// ring[(seq-1)%len(ring)]. Guarded by mu, like everything below.
	ring []trace.Event
	last uint64 // number of the newest event; 0 before the first
	// floor is the number of the newest event before the last reset: events up to it
	// are forgotten. gen counts the resets; a stream that sees it change tells its page
	// to start over.
	floor, gen uint64
	// plots are the boxes' numbers over time, sampled as each event is folded.
	plots *plots
	pipe  *pipeline
	// label is the pipeline the boxes in pipe belong to (startPipeline).
	label pipelineLabel
	subs  map[chan struct{}]struct{} // one per stream, buffered 1
}

// newHub returns a hub keeping the last capacity events.
func newHub(l layout, capacity int, caches func() map[string]cacheSize) *hub {
	h := &hub{layout: l, caches: caches, clock: time.Now, ring: make([]trace.Event, capacity), subs: map[chan struct{}]struct{}{},
		plots: newPlots(maxPlotPoints)}
	h.pipe = h.freshPipeline("")
	return h
}

// freshPipeline is the boxes of the layout, every count at zero, their queues of
// kind queue ("" while unknown).
func (h *hub) freshPipeline(queue string) *pipeline {
	p := newPipeline(h.layout.Workers)
	p.queueKind = queue
	for _, name := range h.layout.Informers {
		p.informer(name)
	}
	for _, name := range h.layout.Handlers {
		p.handler(name).Informer = h.layout.HandlerOf[name]
	}
	return p
}

// explorerStage is the stage of the explorer's own events in the journey stream
// (pipelineStarted, in the live build's runner.go): it is no stage of the pipeline,
// but the reader should see where the controller was replaced.
const explorerStage trace.Stage = "explorer"

// Record is the hub's trace.Sink.
func (h *hub) Record(e trace.Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	h.mu.Lock()
	h.recordLocked(e)
	h.mu.Unlock()
}

// recordLocked keeps e in the ring, folds it into the boxes and wakes the streams.
func (h *hub) recordLocked(e trace.Event) {
	h.last++
	h.ring[(h.last-1)%uint64(len(h.ring))] = e
	h.pipe.apply(e)
	h.plots.sample(h.last, e, h.pipe)
	h.wakeLocked()
}

// reset forgets every event: the ring, the boxes and the plots start over, as for a
// replay that seeks backwards. Event numbers go on from where they were, so a stream
// never confuses an event before the reset with one after; it learns of the reset
// from the generation since returns, and tells its page.
func (h *hub) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.floor = h.last
	h.gen++
	h.pipe = h.freshPipeline(h.label.Queue)
	h.plots = newPlots(maxPlotPoints)
	h.wakeLocked()
}

// wakeLocked wakes every stream.
func (h *hub) wakeLocked() {
	for c := range h.subs {
		select {
		case c <- struct{}{}:
		default: // already woken; it will read this event with the others
		}
	}
}

// subscribe returns a channel that receives a value whenever events arrive after
// the last read, and the function that unsubscribes it.
func (h *hub) subscribe() (wake <-chan struct{}, cancel func()) {
	c := make(chan struct{}, 1)
	h.mu.Lock()
	h.subs[c] = struct{}{}
	h.mu.Unlock()
	return c, func() {
		h.mu.Lock()
		delete(h.subs, c)
		h.mu.Unlock()
	}
}

// numbered is an event with its number in the hub.
type numbered struct {
	Seq uint64
	trace.Event
}

// since returns up to limit events numbered after seq, oldest first, and how many
// events after seq have already left the ring (missed).
func (h *hub) since(seq uint64, limit int) (events []numbered, missed uint64) {
	return h.appendSince(nil, seq, limit)
}

// sinceGen is since for a stream that has seen generation gen: when the hub was
// reset since, it returns the events after the reset (none are missed: the ones
// before are forgotten) and the new generation, in one hold of mu, so that the stream
// says "start over" before it sends them.
func (h *hub) sinceGen(seq, gen uint64, limit int) (events []numbered, missed, newGen uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gen != gen {
		seq = h.floor
	}
	events, missed = h.appendSinceLocked(nil, seq, limit)
	return events, missed, h.gen
}

// appendSince is since, appending the events to dst. It holds mu for the copy of at
// most limit events: O(limit), whatever the ring's size.
func (h *hub) appendSince(dst []numbered, seq uint64, limit int) (events []numbered, missed uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.appendSinceLocked(dst, seq, limit)
}

// appendSinceLocked is appendSince with mu held.
func (h *hub) appendSinceLocked(dst []numbered, seq uint64, limit int) (events []numbered, missed uint64) {
	// Events up to the floor were forgotten by a reset, not missed.
	seq = max(seq, h.floor)
	oldest := h.oldestLocked()
	if seq+1 < oldest {
		missed = oldest - (seq + 1)
		seq = oldest - 1
	}
	if seq < h.last {
		dst = slices.Grow(dst, int(min(uint64(limit), h.last-seq)))
	}
	events = dst
	for n := seq + 1; n <= h.last && len(events)-len(dst) < limit; n++ {
		events = append(events, numbered{Seq: n, Event: h.ring[(n-1)%uint64(len(h.ring))]})
	}
	return events, missed
}

// oldestLocked is the number of the oldest event still in the ring.
func (h *hub) oldestLocked() uint64 {
	if h.last > uint64(len(h.ring)) {
		return h.last - uint64(len(h.ring)) + 1
	}
	return 1
}

// runningPipeline is the running pipeline's label.
func (h *hub) runningPipeline() pipelineLabel {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.label
}

// plotsSince is the plots' points and marks after event seq, with the generation
// they belong to: a page whose generation differs asks again from 0.
func (h *hub) plotsSince(seq uint64) (plotsView, uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.plots.since(seq), h.gen
}

// generation is how many times the hub was reset.
func (h *hub) generation() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gen
}

// newest is the number of the newest event.
func (h *hub) newest() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// snapshot is the pipeline's boxes now, with the caches' sizes.
func (h *hub) snapshot() snapshot {
	var sizes map[string]cacheSize
	if h.caches != nil {
		// Why outside mu: reading a cache takes its lock; the pipeline may hold that
		// lock while it reports to Record, which takes mu.
		sizes = h.caches()
	}
	// Why the clock is read before mu: in replay it is the player's, and the player
	// holds its own lock while it feeds the hub (Record takes mu). Reading it under mu
	// would take the two locks in the other order.
	now := h.clock()
	h.mu.Lock()
	s := h.pipe.snapshot(now, h.layout.Informers, h.layout.Handlers)
	s.Events = h.last - h.floor
	s.Generation = h.gen
	s.Pipeline = h.label
	h.mu.Unlock()
	for i := range s.Informers {
		if size, ok := sizes[s.Informers[i].Resource]; ok {
			s.Informers[i].Indexer.Objects = size.Objects
			s.Informers[i].Indexer.Indices = size.Indices
		}
	}
	return s
}

// journeyChunk is how many events journey copies out of the ring per hold of mu.
//
// Why chunks: a journey examines every kept event (ringSize, 20,000), and the page
// asks for one every 300ms while it follows a key. Walked under mu, the ring would
// stall Record — the pipeline's own goroutines — for the whole walk; copied a chunk
// at a time, mu is held for O(journeyChunk) and the journey's memory is one chunk.
const journeyChunk = 1024

// journey is every kept event of the object key of informer source, and of the
// workqueue keys it caused work for (trace.Journey's rule; source "" follows key as a
// workqueue key), with the boxes they light up in the order they were first reached. It reads the ring as far as the newest event when it began, one chunk per
// hold of mu (appendSince), and follows the key outside mu: Record runs between
// chunks, and the events it records meanwhile are not part of this journey.
//
// A journey also shows where the explorer replaced the controller (a pipelineStarted
// mark) between two of its events: that is where its stages change, deltafifo for
// realfifo or back. Marks before its first event or after its last are left out.
//
// Pitfall: a burst that wraps the ring while the walk is between chunks takes the
// events it overwrote out of the journey, as out of any journey after it. The walk
// resumes where the ring now starts (appendSince skips what left), so it never reads a
// slot's newer event as the older one it replaced.
func (h *hub) journey(source, key string) (events []numbered, boxes []string) {
	f := trace.NewFollower(source, key)
	end := h.newest()
	var marks []numbered // pipelineStarted marks since the journey's last event
	var chunk []numbered // reused: one chunk's memory for the whole walk
	for seq := uint64(0); seq < end; seq = chunk[len(chunk)-1].Seq {
		chunk, _ = h.appendSince(chunk[:0], seq, journeyChunk)
		if h.afterChunk != nil {
			h.afterChunk()
		}
		// Invariant: chunk is not empty, since the ring's newest is at least end > seq;
		// the check keeps a broken invariant from looping forever.
		if len(chunk) == 0 {
			break
		}
		for _, n := range chunk {
			if n.Seq > end {
				return events, boxes
			}
			if n.Stage == explorerStage {
				if len(events) > 0 {
					marks = append(marks, n)
				}
				continue
			}
			if !f.Next(n.Event) {
				continue
			}
			events = append(append(events, marks...), n)
			marks = marks[:0]
			if b := boxOf(n.Event); b != "" && !slices.Contains(boxes, b) {
				boxes = append(boxes, b)
			}
		}
	}
	return events, boxes
}

// boxOf names the diagram box an event belongs to: "reflector:foos",
// "queue:foos", "indexer:foos", "handler:enqueueFoo", "workqueue", "workers".
// Events of no box (a handler's key mapping) return "".
//
// Why Got lights the workers, though the workqueue reports it: Got is the moment a
// worker takes the key — from then on the key is in the worker's hands, and the
// journey should show it there, not when the sync's outcome is reported.
func boxOf(e trace.Event) string {
	if e.Kind == trace.Got {
		return "workers"
	}
	switch e.Stage {
	case trace.Reflector:
		return "reflector:" + e.Source
	case trace.DeltaFIFO, trace.RealFIFO:
		return "queue:" + e.Source
	case trace.Informer:
		return "indexer:" + e.Source
	case trace.Listener:
		return "handler:" + e.Source
	case trace.Workqueue:
		return "workqueue"
	case trace.Controller:
		if e.Kind == trace.Reconciled {
			return "workers"
		}
	}
	return ""
}

// ordered is the keys of m: those in first (in that order), then the rest sorted.
func ordered[V any](m map[string]V, first []string) []string {
	var out []string
	for _, k := range first {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(first, k) {
			out = append(out, k)
		}
	}
	return out
}
