package main

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/trace"
)

// sseMessage is one server-sent event.
type sseMessage struct{ event, id, data string }

// openStream GETs /events with the given Last-Event-ID ("" for none) and returns the
// messages as they arrive; the channel closes when the stream ends.
func openStream(t *testing.T, ts *testServer, lastID string) <-chan sseMessage {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/events", nil)
	require.NoError(t, err)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	out := make(chan sseMessage, 100)
	// Goroutine owned by the test: reads the stream until it ends or the test's
	// cleanup cancels the request.
	go func() {
		defer close(out)
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		var m sseMessage
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "":
				out <- m
				m = sseMessage{}
			case strings.HasPrefix(line, "event: "):
				m.event = line[len("event: "):]
			case strings.HasPrefix(line, "id: "):
				m.id = line[len("id: "):]
			case strings.HasPrefix(line, "data: "):
				m.data = line[len("data: "):]
			}
		}
	}()
	return out
}

// next is the next message of kind event, skipping others (state snapshots arrive
// whenever the boxes change).
func next(t *testing.T, stream <-chan sseMessage, event string) sseMessage {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m, ok := <-stream:
			require.True(t, ok, "the stream ended before an %q message", event)
			if m.event == event {
				return m
			}
		case <-timeout:
			t.Fatalf("no %q message within 10s", event)
		}
	}
}

func testHub(capacity int) *hub {
	return newHub(layout{Informers: []string{"foos"}, Handlers: []string{"enqueueFoo"}, HandlerOf: map[string]string{"enqueueFoo": "foos"}, Workers: 2}, capacity, nil)
}

func added(key string) trace.Event {
	return trace.Event{Stage: trace.Workqueue, Kind: trace.Added, Source: "foos", Key: key, Reason: "new", QueueLen: 1}
}

func TestEventStream(t *testing.T) {
	t.Run("a stream starts with the boxes' state, then carries every new event as the timeline's sentence", func(t *testing.T) {
		h := testHub(100)
		ts := startTestServer(t, true, h)
		stream := openStream(t, ts, "")
		var s snapshot
		require.NoError(t, json.Unmarshal([]byte(next(t, stream, "state").data), &s))
		require.Len(t, s.Informers, 1)
		assert.Equal(t, "foos", s.Informers[0].Resource)

		h.Record(added("explore/demo"))
		m := next(t, stream, "events")
		var events []wireEvent
		require.NoError(t, json.Unmarshal([]byte(m.data), &events))
		require.Len(t, events, 1)
		assert.Equal(t, "1", m.id)
		assert.Equal(t, wireEvent{Seq: 1, T: events[0].T, Stage: "workqueue", Kind: "added", Source: "foos", Key: "explore/demo",
			Box: "workqueue", Text: "added explore/demo: new (queue 1)"}, events[0])

		require.NoError(t, json.Unmarshal([]byte(next(t, stream, "state").data), &s), "the event changed the boxes")
		assert.Equal(t, 1, s.Workqueue.Adds)
		assert.Equal(t, uint64(1), s.Events)
	})
	t.Run("a log line is a row with its level, and lights no box", func(t *testing.T) {
		h := testHub(100)
		ts := startTestServer(t, true, h)
		stream := openStream(t, ts, "")
		next(t, stream, "state")
		slog.New(trace.CaptureLogs(nil, "foo-controller", nil, h.Record)).Warn("handler falling behind", "handler", "enqueueFoo", "backlog", 1000)
		var events []wireEvent
		require.NoError(t, json.Unmarshal([]byte(next(t, stream, "events").data), &events))
		require.Len(t, events, 1)
		assert.Equal(t, wireEvent{Seq: 1, T: events[0].T, Stage: "log", Kind: "logged", Source: "foo-controller", Level: "WARN",
			Text: "logged WARN: handler falling behind handler=enqueueFoo backlog=1000"}, events[0])
	})
	t.Run("a reconnecting page resumes after its Last-Event-ID", func(t *testing.T) {
		h := testHub(100)
		for _, k := range []string{"a", "b", "c", "d", "e"} {
			h.Record(added("ns/" + k))
		}
		ts := startTestServer(t, true, h)
		var events []wireEvent
		require.NoError(t, json.Unmarshal([]byte(next(t, openStream(t, ts, "3"), "events").data), &events))
		require.Len(t, events, 2)
		assert.Equal(t, "ns/d", events[0].Key)
	})
	t.Run("a page that fell behind the ring is told how many events it missed", func(t *testing.T) {
		h := testHub(4)
		for i := range 10 {
			h.Record(added("ns/" + string(rune('a'+i))))
		}
		ts := startTestServer(t, true, h)
		stream := openStream(t, ts, "1")
		assert.JSONEq(t, `{"missed":5}`, next(t, stream, "gap").data)
		var events []wireEvent
		require.NoError(t, json.Unmarshal([]byte(next(t, stream, "events").data), &events))
		assert.Equal(t, uint64(7), events[0].Seq)
	})
	t.Run("a new page gets the recent past, not the whole ring", func(t *testing.T) {
		h := testHub(2000)
		for range backfill + 50 {
			h.Record(added("ns/x"))
		}
		ts := startTestServer(t, true, h)
		var events []wireEvent
		require.NoError(t, json.Unmarshal([]byte(next(t, openStream(t, ts, ""), "events").data), &events))
		assert.Equal(t, uint64(51), events[0].Seq)
	})
	t.Run("after a reset the stream says so, then carries only the events after it", func(t *testing.T) {
		h := testHub(100)
		h.Record(added("ns/before"))
		ts := startTestServer(t, true, h)
		stream := openStream(t, ts, "")
		next(t, stream, "events")
		h.reset()
		h.Record(added("ns/after"))
		assert.JSONEq(t, `{"generation":1}`, next(t, stream, "reset").data)
		var events []wireEvent
		require.NoError(t, json.Unmarshal([]byte(next(t, stream, "events").data), &events))
		require.Len(t, events, 1)
		assert.Equal(t, "ns/after", events[0].Key)
		assert.Equal(t, uint64(2), events[0].Seq, "numbers go on across a reset")

		var s snapshot
		require.NoError(t, json.Unmarshal([]byte(next(t, openStream(t, ts, ""), "state").data), &s))
		assert.Equal(t, uint64(1), s.Events, "the boxes count from the reset")
		assert.Equal(t, uint64(1), s.Generation)
		assert.Equal(t, 1, s.Workqueue.Adds)
	})
	t.Run("the stream ends when the server shuts down", func(t *testing.T) {
		ts := startTestServer(t, true, testHub(10))
		stream := openStream(t, ts, "")
		next(t, stream, "state")
		close(ts.done)
		for range stream {
		}
	})
}

func TestJourneyEndpoint(t *testing.T) {
	h := testHub(10)
	h.Record(trace.Event{Stage: trace.Reflector, Kind: trace.WatchEvent, Source: "foos", Key: "explore/demo", Type: "ADDED"})
	h.Record(trace.Event{Stage: trace.Listener, Kind: trace.HandlerCalled, Source: "enqueueFoo", Informer: "foos", Key: "explore/demo", Type: "add"})
	h.Record(added("explore/demo"))
	h.Record(trace.Event{Stage: trace.Reflector, Kind: trace.WatchEvent, Source: "deployments", Key: "explore/demo", Type: "ADDED"})
	ts := startTestServer(t, true, h)
	type journey struct {
		Source, Key string
		Events      []wireEvent
		Boxes       []string
	}
	get := func(query string) journey {
		t.Helper()
		code, body := do(t, mustGet(t, ts.URL+"/journey?"+query))
		require.Equal(t, http.StatusOK, code, body)
		var j journey
		require.NoError(t, json.Unmarshal([]byte(body), &j))
		return j
	}

	j := get("source=foos&key=explore/demo")
	assert.Equal(t, "foos", j.Source, "the answer names what it follows, so the page can drop a stale one")
	assert.Equal(t, "explore/demo", j.Key)
	assert.Equal(t, []string{"reflector:foos", "handler:enqueueFoo", "workqueue"}, j.Boxes, "the Foo's, not the same-named Deployment's")
	assert.Len(t, j.Events, 3)

	j = get("source=deployments&key=explore/demo")
	assert.Equal(t, []string{"reflector:deployments"}, j.Boxes, "the Deployment's own, no mapping yet")

	j = get("key=explore/demo")
	assert.Empty(t, j.Source)
	assert.Equal(t, []string{"workqueue"}, j.Boxes, "no source: the workqueue key")

	code, body := do(t, mustGet(t, ts.URL+"/journey?source=foos"))
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, message(t, body), "?key=")
}

// TestEveryRowsFollowButtonLeadsToAJourneyThatHoldsTheRow: the page follows a row's
// key from the row's From, so each wire event must name the journey it is part of.
func TestEveryRowsFollowButtonLeadsToAJourneyThatHoldsTheRow(t *testing.T) {
	const x = "explore/demo"
	events := []trace.Event{
		{Stage: trace.Reflector, Kind: trace.WatchEvent, Source: "foos", Key: x},
		{Stage: trace.RealFIFO, Kind: trace.Queued, Source: "foos", Key: x},
		{Stage: trace.Informer, Kind: trace.Applied, Source: "foos", Key: x},
		{Stage: trace.Listener, Kind: trace.HandlerCalled, Source: "enqueueFoo", Informer: "foos", Key: x},
		added(x),
		{Stage: trace.Reflector, Kind: trace.WatchEvent, Source: "deployments", Key: x},
		{Stage: trace.Listener, Kind: trace.HandlerCalled, Source: "handleDeployment", Informer: "deployments", Key: x},
		{Stage: trace.Controller, Kind: trace.Mapped, Source: "deployments", Key: x, Detail: x},
		{Stage: trace.Workqueue, Kind: trace.Got, Source: "foos", Key: x},
		{Stage: trace.Controller, Kind: trace.Reconciled, Source: "foos", Key: x},
		{Stage: trace.LeaderElection, Kind: trace.LeaseRenewed, Source: "explore", Key: "default/foo-controller-explore"},
		{Stage: trace.Reflector, Kind: trace.Relist, Source: "foos"},
	}
	want := []string{"foos", "foos", "foos", "foos", "", "deployments", "deployments", "deployments", "", "", "explore", ""}
	h := testHub(100)
	for _, e := range events {
		h.Record(e)
	}
	rows, _ := h.since(0, 100)
	require.Len(t, rows, len(events))
	for i, n := range rows {
		w := toWire(n)
		assert.Equal(t, want[i], w.From, "%s", w.Text)
		if w.Key == "" {
			continue
		}
		journey, _ := h.journey(w.From, w.Key)
		assert.True(t, slices.ContainsFunc(journey, func(j numbered) bool { return j.Seq == n.Seq }),
			"following %q from %q holds the row it was clicked on: %s", w.Key, w.From, w.Text)
	}
}

func mustGet(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	return req
}
