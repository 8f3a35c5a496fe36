package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kubeinternals/informers/trace"
)

// feed applies events to a pipeline and samples each into plots, numbered from 1.
func feed(p *pipeline, pl *plots, events ...trace.Event) {
	for i, e := range events {
		p.apply(e)
		pl.sample(uint64(i+1), e, p)
	}
}

// values is a series' points as (seq, value) pairs.
func values(s series) [][2]int {
	var out [][2]int
	for _, pt := range s.Points {
		out = append(out, [2]int{int(pt.Seq), pt.V})
	}
	return out
}

func TestPlotsFollowTheBoxesAndMarkRelistsWatchEndsAndFaults(t *testing.T) {
	p, pl := newPipeline(1), newPlots(100)
	q := func(ms, depth int) trace.Event {
		return at(ms, trace.Event{Stage: trace.RealFIFO, Kind: trace.Queued, Source: "foos", QueueLen: depth})
	}
	l := func(ms int, k trace.Kind) trace.Event {
		return at(ms, trace.Event{Stage: trace.Listener, Kind: k, Source: "enqueueFoo", Informer: "foos", Key: "ns/a"})
	}
	w := func(ms int, k trace.Kind, reason string, depth int, d time.Duration) trace.Event {
		return at(ms, trace.Event{Stage: trace.Workqueue, Kind: k, Source: "foos", Key: "ns/a", Reason: reason, QueueLen: depth, Duration: d})
	}
	feed(p, pl,
		q(0, 1), q(1, 2), // 1, 2
		at(2, trace.Event{Stage: trace.RealFIFO, Kind: trace.Popped, Source: "foos", QueueLen: 1}), // 3
		l(3, trace.Buffered), l(4, trace.Buffered), l(5, trace.HandlerCalled), l(6, trace.HandlerReturned), // 4–7
		w(7, trace.Added, "new", 1, 0), w(8, trace.Added, "deduplicated", 1, 0), w(9, trace.Got, "", 0, 0), // 8–10
		w(10, trace.RateLimited, "", 0, 5*time.Millisecond),                                                                  // 11: due at 15ms
		at(11, trace.Event{Stage: trace.Reflector, Kind: trace.WatchEnded, Source: "foos", Reason: "410 Gone"}),              // 12
		at(12, trace.Event{Stage: trace.Reflector, Kind: trace.Relist, Source: "foos", Reason: "410 Gone"}),                  // 13
		at(16, trace.Event{Stage: trace.Experiment, Kind: trace.Action, Source: "experiment", Type: "fault", Detail: "cut"}), // 14: retry due
	)
	v := pl.since(0)
	byID := map[string]series{}
	for _, s := range v.Series {
		byID[s.ID] = s
	}
	assert.Equal(t, [][2]int{{1, 1}, {2, 2}, {3, 1}}, values(byID["queue:foos"]), "the queue's depth after each event that changed it")
	assert.Equal(t, [][2]int{{4, 1}, {5, 2}, {6, 1}}, values(byID["backlog:enqueueFoo"]), "buffered, buffered, handed to the handler; its return changes nothing")
	assert.Equal(t, [][2]int{{8, 1}, {10, 0}}, values(byID["workqueue"]), "a deduplicated Add adds no point")
	assert.Equal(t, [][2]int{{11, 1}, {14, 0}}, values(byID["retries"]), "the retry stops waiting at the first event after it was due")
	assert.Equal(t, []string{"queue", "backlog", "workqueue", "workqueue"}, []string{byID["queue:foos"].Group, byID["backlog:enqueueFoo"].Group, byID["workqueue"].Group, byID["retries"].Group})
	var kinds []string
	for _, m := range v.Marks {
		kinds = append(kinds, m.Kind)
	}
	assert.Equal(t, []string{"watch ended", "relist", "fault"}, kinds)
	assert.Equal(t, "experiment action (fault): cut", v.Marks[2].Text)
	assert.InDelta(t, unixMillis(t0)+16, v.Marks[2].T, 0.001)

	later := pl.since(10)
	assert.Empty(t, later.Series[0].Points, "since returns only the points after the page's last")
	assert.Len(t, later.Marks, 3)
}

func TestAPlotKeepsAtMostItsBoundDroppingTheOldestQuarter(t *testing.T) {
	p, pl := newPipeline(1), newPlots(8)
	for i := range 20 {
		e := at(i, trace.Event{Stage: trace.RealFIFO, Kind: trace.Queued, Source: "foos", QueueLen: i + 1})
		p.apply(e)
		pl.sample(uint64(i+1), e, p)
	}
	pts := pl.since(0).Series[0].Points
	assert.LessOrEqual(t, len(pts), 8)
	assert.Equal(t, 20, pts[len(pts)-1].V, "the newest is kept")
	for i := 1; i < len(pts); i++ {
		assert.Equal(t, pts[i-1].Seq+1, pts[i].Seq, "in order, without gaps")
	}
}
