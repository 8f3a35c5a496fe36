package main

import (
	"time"

	"github.com/kubeinternals/informers/trace"
)

// plots are the page's time series: how each queue, each handler's backlog, the
// workqueue and the retries waiting changed over time, and the moments worth marking
// on the time axis (relists, watches that ended, faults and changes the reader made,
// a pipeline switch). They are sampled from the boxes (pipeline) after each event
// that can change them, so a curve is exactly the box's number over time — in live
// mode and in replay alike, since both feed the hub the same events.
//
// Invariant: a series gets a point only when its value changes, so a quiet pipeline
// adds nothing, and a series holds at most maxPoints (the oldest quarter goes first).
type plots struct {
	// series by id, and ids in the order they first had a point.
	series map[string]*series
	order  []string
	marks  []mark
	// maxPoints bounds each series and the marks.
	maxPoints int
}

// series is one curve. Group says which plot it belongs to: "queue" (the informers'
// queues), "backlog" (the handlers' buffers), "workqueue" (its depth and the retries
// waiting).
type series struct {
	ID     string  `json:"id"`
	Label  string  `json:"label"`
	Group  string  `json:"group"`
	Points []point `json:"points"`
}

// point is a series' value from the event numbered Seq on, at T (Unix milliseconds,
// fractional: events a few microseconds apart stay apart).
type point struct {
	Seq uint64  `json:"seq"`
	T   float64 `json:"t"`
	V   int     `json:"v"`
}

// mark is a moment on the time axis: Kind "relist", "watch ended", "fault", "change"
// or "pipeline"; Text is the event's sentence.
type mark struct {
	Seq  uint64  `json:"seq"`
	T    float64 `json:"t"`
	Kind string  `json:"kind"`
	Text string  `json:"text"`
}

// maxPlotPoints is how many points each series keeps, and how many marks.
const maxPlotPoints = 5000

func newPlots(maxPoints int) *plots {
	return &plots{series: map[string]*series{}, maxPoints: maxPoints}
}

// unixMillis is t as fractional Unix milliseconds.
func unixMillis(t time.Time) float64 { return float64(t.UnixNano()) / 1e6 }

// sample records what event seq, e, changed, once p has applied it.
func (pl *plots) sample(seq uint64, e trace.Event, p *pipeline) {
	t := unixMillis(e.Time)
	switch e.Stage {
	case trace.DeltaFIFO, trace.RealFIFO:
		pl.set("queue:"+e.Source, e.Source+" ("+string(e.Stage)+")", "queue", seq, t, p.informer(e.Source).Queue.Depth)
	case trace.Listener:
		pl.set("backlog:"+e.Source, e.Source, "backlog", seq, t, p.handler(e.Source).Backlog)
	case trace.Workqueue:
		pl.set("workqueue", "workqueue depth", "workqueue", seq, t, p.queue.Depth)
	case trace.Reflector:
		switch e.Kind {
		case trace.Relist:
			pl.mark(seq, t, "relist", e)
		case trace.WatchEnded:
			pl.mark(seq, t, "watch ended", e)
		}
	case trace.Experiment:
		if e.Kind == trace.Action {
			pl.mark(seq, t, e.Type, e) // "fault" or "change"
		}
	case explorerStage:
		pl.mark(seq, t, "pipeline", e)
	}
	// Why on every event: a retry stops waiting when its time comes, with no event of
	// its own; the next event, whatever it is, shows the count fall.
	if s := pl.series["retries"]; len(p.retryAt) > 0 || (s != nil && s.Points[len(s.Points)-1].V > 0) {
		pl.set("retries", "retries waiting", "workqueue", seq, t, p.retriesWaiting(e.Time))
	}
}

// set gives series id the value v from event seq on, if that changes it.
func (pl *plots) set(id, label, group string, seq uint64, t float64, v int) {
	s := pl.series[id]
	if s == nil {
		s = &series{ID: id, Label: label, Group: group}
		pl.series[id] = s
		pl.order = append(pl.order, id)
	} else if s.Points[len(s.Points)-1].V == v {
		return
	}
	s.Points = bounded(append(s.Points, point{Seq: seq, T: t, V: v}), pl.maxPoints)
}

func (pl *plots) mark(seq uint64, t float64, kind string, e trace.Event) {
	pl.marks = bounded(append(pl.marks, mark{Seq: seq, T: t, Kind: kind, Text: e.Source + " " + e.String()}), pl.maxPoints)
}

// bounded drops the oldest quarter of s once it is longer than n.
func bounded[T any](s []T, n int) []T {
	if n <= 0 || len(s) <= n {
		return s
	}
	return append(s[:0], s[len(s)-n+n/4:]...)
}

// plotsView is what GET /plots returns: every series' points and the marks after
// event number After, for a page that has the ones before.
type plotsView struct {
	After  uint64   `json:"after"`
	Series []series `json:"series"`
	Marks  []mark   `json:"marks"`
}

// since copies the points and marks numbered after seq.
func (pl *plots) since(seq uint64) plotsView {
	v := plotsView{After: seq, Series: []series{}, Marks: []mark{}}
	for _, id := range pl.order {
		s := pl.series[id]
		out := series{ID: s.ID, Label: s.Label, Group: s.Group, Points: []point{}}
		for _, pt := range s.Points {
			if pt.Seq > seq {
				out.Points = append(out.Points, pt)
			}
		}
		v.Series = append(v.Series, out)
	}
	for _, m := range pl.marks {
		if m.Seq > seq {
			v.Marks = append(v.Marks, m)
		}
	}
	return v
}
