package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/kubeinternals/informers/trace"
)

// wireEvent is a trace event as the page receives it.
type wireEvent struct {
	Seq    uint64 `json:"seq"`
	T      int64  `json:"t"` // Unix milliseconds
	Stage  string `json:"stage"`
	Kind   string `json:"kind"`
	Source string `json:"source"`
	Key    string `json:"key,omitempty"`
	// From is what the page's follow button asks /journey to follow with Key: the
	// informer (resource) whose object Key is, or "" (absent) when Key is a workqueue
	// key (journeySource).
	From string `json:"from,omitempty"`
	// Box is the diagram box the event lights up (boxOf).
	Box string `json:"box,omitempty"`
	// Text is the event's sentence, as the timeline prints it (trace.Event.String).
	Text string `json:"text"`
	// Level is a log line's level (trace.Logged: "INFO", "WARN", "ERROR"), which the
	// page colours; absent for every other event.
	Level string `json:"level,omitempty"`
}

func toWire(n numbered) wireEvent {
	w := wireEvent{Seq: n.Seq, T: n.Time.UnixMilli(), Stage: string(n.Stage), Kind: string(n.Kind),
		Source: n.Source, Key: n.Key, From: journeySource(n.Event), Box: boxOf(n.Event), Text: n.Event.String()}
	if n.Kind == trace.Logged {
		w.Level = n.Type
	}
	return w
}

// journeySource is the source trace.Journey follows e's key from: the informer a
// listener event's handler is registered on, "" for a workqueue key (a workqueue or
// Reconciled event), else the event's Source — the resource of a reflector's, a
// queue's, an informer's object, or of the object a Mapped event mapped.
//
// Why not the event's Source for all: a listener event's Source is its handler and a
// workqueue event's its queue, and neither names the informer whose object the key is.
func journeySource(e trace.Event) string {
	switch {
	case e.Key == "":
		return ""
	case e.Stage == trace.Listener:
		return e.Informer
	case e.Stage == trace.Workqueue, e.Kind == trace.Reconciled:
		return ""
	}
	return e.Source
}

func toWires(ns []numbered) []wireEvent {
	out := make([]wireEvent, len(ns))
	for i, n := range ns {
		out[i] = toWire(n)
	}
	return out
}

// Stream tuning.
const (
	// batchLimit bounds the events in one SSE message.
	batchLimit = 500
	// statePeriod is how often a stream sends the boxes' state (when it changed).
	statePeriod = 250 * time.Millisecond
	// backfill is how many past events a new stream starts with.
	backfill = 300
)

// serveEvents is GET /events: a server-sent event stream of
//
//	event: state   data: the snapshot of every box, at most every statePeriod when it changed
//	event: events  data: a JSON array of new trace events (id: the newest one's number)
//	event: gap     data: {"missed": n} — events that left the ring before this stream read them
//	event: reset   data: {"generation": g} — the hub forgot every event (a replay went back): start over
//
// A reconnecting EventSource sends Last-Event-ID and resumes after it. The stream ends
// when the client goes away or done is closed (the server is shutting down).
func (s *server) serveEvents(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	wake, unsubscribe := s.hub.subscribe()
	defer unsubscribe()
	// Why the generation first: a reset between the two reads is then seen by the
	// first read of events, which starts the page over.
	gen := s.hub.generation()
	seq := s.resumeFrom(r)
	ticker := time.NewTicker(statePeriod)
	defer ticker.Stop()
	var lastState []byte
	sendState := func() error {
		b, err := json.Marshal(s.state())
		if err != nil || string(b) == string(lastState) {
			return err
		}
		lastState = b
		_, err = fmt.Fprintf(w, "event: state\ndata: %s\n\n", b)
		return err
	}
	if err := sendState(); err != nil {
		return
	}
	for {
		// Drain everything that arrived: under load each wake carries many events, so
		// the cost per event falls as the rate rises.
		for {
			events, missed, g := s.hub.sinceGen(seq, gen, batchLimit)
			if g != gen {
				gen = g
				if _, err := fmt.Fprintf(w, "event: reset\ndata: {\"generation\":%d}\n\n", g); err != nil {
					return
				}
			}
			if missed > 0 {
				if _, err := fmt.Fprintf(w, "event: gap\ndata: {\"missed\":%d}\n\n", missed); err != nil {
					return
				}
			}
			if len(events) == 0 {
				break
			}
			b, err := json.Marshal(toWires(events))
			if err != nil {
				return
			}
			seq = events[len(events)-1].Seq
			if _, err := fmt.Fprintf(w, "id: %d\nevent: events\ndata: %s\n\n", seq, b); err != nil {
				return
			}
		}
		flusher.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case <-wake:
		case <-ticker.C:
			if err := sendState(); err != nil {
				return
			}
		}
	}
}

// resumeFrom is the event number a stream starts after: Last-Event-ID when the
// browser reconnects, else backfill events before the newest.
func (s *server) resumeFrom(r *http.Request) uint64 {
	newest := s.hub.newest()
	if id, err := strconv.ParseUint(r.Header.Get("Last-Event-ID"), 10, 64); err == nil && id <= newest {
		return id
	}
	return newest - min(newest, backfill)
}

// serveJourney is GET /journey?source=resource&key=namespace/name: the kept events of
// the object key of informer source (trace.Journey's rule: its own stages, then the
// workqueue keys its handlers queued or mapped it to), and the boxes they passed
// through, in order. An empty source follows key as a workqueue key.
func (s *server) serveJourney(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	source, key := q.Get("source"), q.Get("key")
	if key == "" {
		httpError(w, http.StatusBadRequest, "journey needs ?key=namespace/name, and &source= the informer's resource (foos, deployments), or nothing for a workqueue key")
		return
	}
	events, boxes := s.hub.journey(source, key)
	writeJSON(w, http.StatusOK, map[string]any{"source": source, "key": key, "events": toWires(events), "boxes": boxes})
}

// serveState is GET /state: the snapshot once, for scripts and tests.
func (s *server) serveState(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.state())
}

// aroundSpan is how many events /around returns on each side of the one asked for.
const aroundSpan = 12

// serveAround is GET /around?seq=N: the kept events numbered N-12 to N+12, for the
// page to show what happened at a moment of a plot.
func (s *server) serveAround(w http.ResponseWriter, r *http.Request) {
	seq, err := strconv.ParseUint(r.URL.Query().Get("seq"), 10, 64)
	if err != nil {
		httpError(w, http.StatusBadRequest, "around needs ?seq=N, an event number: "+err.Error())
		return
	}
	from := seq - min(seq, aroundSpan+1)
	events, _ := s.hub.since(from, 2*aroundSpan+1)
	writeJSON(w, http.StatusOK, map[string]any{"seq": seq, "events": toWires(events)})
}

// servePlots is GET /plots?after=N: every plot's points and the marks after event N,
// and the generation they belong to (a page of another generation asks from 0).
func (s *server) servePlots(w http.ResponseWriter, r *http.Request) {
	var after uint64
	if a := r.URL.Query().Get("after"); a != "" {
		n, err := strconv.ParseUint(a, 10, 64)
		if err != nil {
			httpError(w, http.StatusBadRequest, "plots: after must be an event number: "+err.Error())
			return
		}
		after = n
	}
	v, gen := s.hub.plotsSince(after)
	writeJSON(w, http.StatusOK, map[string]any{"generation": gen, "after": v.After, "series": v.Series, "marks": v.Marks})
}

// state is what the page draws: the hub's snapshot, what repeat-last would do, and
// the replay's position.
func (s *server) state() snapshot {
	snap := s.hub.snapshot()
	if s.replay != nil {
		st := s.replay.player.state(s.replay.file)
		snap.Replay = &st
	}
	snap.LastAction = s.lastActionText()
	return snap
}
