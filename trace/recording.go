package trace

import (
	"fmt"
	"time"
)

// A recording is a run's trace in a file, to read back later: to replay it in the
// explorer without a cluster, to plot it, to compare two runs. The format is JSON
// Lines (docs/recordings/README.md has the whole specification):
//
//	{"format":"kubeinternals-trace","version":2,"start":"2026-11-26T11:40:00.123456789Z","program":"lab",…}
//	{"t":1250000,"stage":"reflector","kind":"listed","source":"foos","type":"watch-list","items":3,"rv":"812"}
//	{"t":1290000,"stage":"realfifo","kind":"queued","source":"foos","key":"default/a","type":"Replaced",…}
//
// The first line is the header (RecordingHeader); every other line is one Event, in
// the order the sink received them, its time given as "t", nanoseconds since the
// header's start. Fields at their zero value are left out. A file may be gzipped;
// the reader recognises it by its first bytes. The reader takes back what the writer
// writes and nothing looser: every name as the format spells it, case included, once
// an object, never null.
//
// Why JSON Lines: a reader can follow a recording with any tool (jq, grep, a
// spreadsheet), a writer appends one line per event without holding the run in
// memory, and a truncated file loses only its last line.
//
// Why offsets instead of timestamps: a line stays short, and a replay needs the time
// between events, not the wall clock. The header's start gives the wall clock back.

// RecordingFormat is the header's "format": it tells a recording from any other JSON
// Lines file.
const RecordingFormat = "kubeinternals-trace"

// RecordingVersion is the format version this package writes, and the newest it
// reads; it reads every older one too. It changes whenever a line gains, loses or
// changes a field: a reader refuses a newer version instead of guessing.
//
// Version 2 added the log lines: events of stage Log, kind Logged, with the field
// "attrs" (CaptureLogs). A version 1 file has none, and is read as it always was.
const RecordingVersion = 2

// RecordingHeader is a recording's first line: which format, when the run started,
// what ran, and the pipeline it traced.
type RecordingHeader struct {
	// Format is RecordingFormat; Version the format's version.
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Start is the wall-clock time every event's offset counts from.
	Start time.Time `json:"start"`
	// Program is what produced the run: "lab", "demo", "foo-controller", "explore".
	Program string `json:"program,omitempty"`
	// Run names the run within the program: a lab scenario's name, say.
	Run string `json:"run,omitempty"`
	// Title says what the run shows, in one sentence: the scenario's question.
	Title string `json:"title,omitempty"`
	// Pipeline is what was traced: the informers, handlers and workqueues.
	Pipeline Pipeline `json:"pipeline"`
}

// Pipeline describes the traced pipeline, as the explorer draws it: one box per
// informer (reflector, queue, indexer), one per handler, the workqueues and the
// workers.
type Pipeline struct {
	Informers  []InformerInfo `json:"informers,omitempty"`
	Handlers   []HandlerInfo  `json:"handlers,omitempty"`
	Workqueues []string       `json:"workqueues,omitempty"`
	// Workers is how many workers took keys from the workqueues; 0 if unknown.
	Workers int `json:"workers,omitempty"`
}

// InformerInfo is one informer: its trace Source (the resource), its queue's stage
// (DeltaFIFO or RealFIFO) and how it took its initial state ("list" or
// "watch-list"), when known.
type InformerInfo struct {
	Source string `json:"source"`
	Queue  Stage  `json:"queue,omitempty"`
	List   string `json:"list,omitempty"`
}

// HandlerInfo is one handler: its name (its events' Source) and the Source of the
// informer it is registered on.
type HandlerInfo struct {
	Name     string `json:"name"`
	Informer string `json:"informer"`
}

// PipelineOf describes the pipeline that reported events: every informer, handler
// and workqueue that reported at least one, in the order of their first event. It
// knows no worker count (Workers is 0); a caller that knows it sets it.
func PipelineOf(events []Event) Pipeline {
	var p Pipeline
	informers := map[string]int{} // Source → index in p.Informers
	informer := func(source string) *InformerInfo {
		i, ok := informers[source]
		if !ok {
			i = len(p.Informers)
			informers[source] = i
			p.Informers = append(p.Informers, InformerInfo{Source: source})
		}
		return &p.Informers[i]
	}
	handlers := map[string]bool{}
	workqueues := map[string]bool{}
	for _, e := range events {
		if e.Source == "" {
			continue
		}
		switch e.Stage {
		case Reflector, Informer:
			inf := informer(e.Source)
			if e.Kind == ListStarted && inf.List == "" {
				inf.List = e.Type
			}
		case DeltaFIFO, RealFIFO:
			informer(e.Source).Queue = e.Stage
		case Listener:
			if !handlers[e.Source] {
				handlers[e.Source] = true
				p.Handlers = append(p.Handlers, HandlerInfo{Name: e.Source, Informer: e.Informer})
			}
		case Workqueue:
			if !workqueues[e.Source] {
				workqueues[e.Source] = true
				p.Workqueues = append(p.Workqueues, e.Source)
			}
		}
	}
	return p
}

// RecordingError is a recording the reader cannot read: which line, and why. Line 1
// is the header.
type RecordingError struct {
	Line int
	Err  error
}

func (e *RecordingError) Error() string {
	return fmt.Sprintf("trace recording, line %d: %v", e.Line, e.Err)
}

func (e *RecordingError) Unwrap() error { return e.Err }
