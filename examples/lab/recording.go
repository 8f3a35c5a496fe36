package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/kubeinternals/informers/trace"
)

// Recordings: with -record DIR, each scenario's events go to DIR/NAME.jsonl.gz (the
// format is in docs/recordings/README.md), for the explorer to replay without a cluster.
// A scenario's recording holds what its own tracers reported and what it did (each
// Do and Fault, as an action), nothing of the scenarios before it.

// newReport is the report a scenario fills, marking its actions in its recording.
func (l *Lab) newReport() *Report {
	r := &Report{}
	if l.recording != nil {
		r.actions = trace.New(l.recording.Record)
	}
	return r
}

// tracer returns a tracer that reports to sinks and, while the lab records, to the
// running scenario's recording.
func (l *Lab) tracer(sinks ...trace.Sink) *trace.Tracer {
	if l.recording != nil {
		sinks = append(sinks, l.recording.Record)
	}
	return trace.New(sinks...)
}

// newRecorder returns a tracer recording every event (and reporting to the
// scenario's recording, if any), and the recorder.
func (l *Lab) newRecorder() (*trace.Tracer, *trace.Recorder) {
	rec := &trace.Recorder{}
	return l.tracer(rec.Record), rec
}

// newRecorderAs is newRecorder for one of several controllers a scenario runs side
// by side, named process: in the recording, its events' sources are prefixed with
// "process/" ("A/foos"), so a replay draws each process's pipeline apart.
func (l *Lab) newRecorderAs(process string) (*trace.Tracer, *trace.Recorder) {
	rec := &trace.Recorder{}
	if l.recording == nil {
		return trace.New(rec.Record), rec
	}
	recording := l.recording
	return trace.New(rec.Record, func(e trace.Event) { recording.Record(prefixed(process, e)) }), rec
}

// prefixed is e with its sources named after process.
func prefixed(process string, e trace.Event) trace.Event {
	e.Source = process + "/" + e.Source
	if e.Informer != "" {
		e.Informer = process + "/" + e.Informer
	}
	return e
}

// addRecording adds the recording another process of the scenario wrote to path
// (foo-controller -record) to the scenario's, its sources prefixed with process.
// It does nothing while the lab does not record.
//
// A process killed with SIGKILL wrote its recording only up to its last flush: the
// file ends mid-line, and the events before that line are kept. The cut is logged,
// not an error: it is what a crash does to any log.
func (l *Lab) addRecording(process, path string) {
	if l.recording == nil {
		return
	}
	_, events, err := trace.OpenRecording(path)
	if err != nil {
		l.log.Warn("a process's recording ends early; its events up to there are kept", "process", process, "events", len(events), "err", err)
	}
	for _, e := range events {
		l.recording.Record(prefixed(process, e))
	}
}

// startRecording starts recording scenario s, if the lab records: its events, and
// the lab's log lines while it runs.
func (l *Lab) startRecording() {
	if l.recordDir != "" {
		l.recording = &trace.Recorder{}
		l.lines.recordTo(l.recording)
	}
}

// saveRecording writes the recording of s to the record directory and stops
// recording. It returns the file's path ("" if the lab does not record).
func (l *Lab) saveRecording(s Scenario) (string, error) {
	rec := l.recording
	l.recording = nil
	l.lines.recordTo(nil)
	if rec == nil {
		return "", nil
	}
	// Why sort: events recorded by other processes (addRecording) arrive after the
	// scenario's own. Stable, so that events stamped alike keep their order.
	events := rec.Events()
	slices.SortStableFunc(events, func(a, b trace.Event) int { return a.Time.Compare(b.Time) })
	path := filepath.Join(l.recordDir, s.Name+".jsonl.gz")
	err := trace.SaveRecording(path, trace.RecordingHeader{Program: "lab", Run: s.Name, Title: s.Question, Pipeline: trace.PipelineOf(events)}, events)
	if err != nil {
		return "", fmt.Errorf("recording %s: %w", s.Name, err)
	}
	return path, nil
}

// prepareRecordDir creates dir for -record.
func prepareRecordDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("-record: %w", err)
	}
	return nil
}

// logLines hands the lab's log lines to the running scenario's recording, as trace
// events (trace.CaptureLogs): a replay then shows what the lab and the informers it
// ran logged, at the moment they logged it. Lines logged between scenarios are
// printed only.
type logLines struct {
	to atomic.Pointer[trace.Recorder] // the running scenario's recording, or nil
}

// logger is a logger that prints through h and, from level up, records each line
// while a scenario records. A nil *logLines records nothing.
func (ll *logLines) logger(h slog.Handler, level slog.Level) *slog.Logger {
	if ll == nil {
		return slog.New(h)
	}
	return slog.New(trace.CaptureLogs(h, "lab", level, ll.record))
}

// recordTo makes rec the recording the log lines go to (nil: none).
func (ll *logLines) recordTo(rec *trace.Recorder) {
	if ll != nil {
		ll.to.Store(rec)
	}
}

func (ll *logLines) record(e trace.Event) {
	if rec := ll.to.Load(); rec != nil {
		rec.Record(e)
	}
}

// logTo is a logger for a scenario's own informers, which the scenario reads back:
// it writes to w from level up, and records those lines too.
func (l *Lab) logTo(w io.Writer, level slog.Level) *slog.Logger {
	return l.lines.logger(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}), level)
}
