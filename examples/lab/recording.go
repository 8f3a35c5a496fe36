package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

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

// startRecording starts recording scenario s, if the lab records.
func (l *Lab) startRecording() {
	if l.recordDir != "" {
		l.recording = &trace.Recorder{}
	}
}

// saveRecording writes the recording of s to the record directory and stops
// recording. It returns the file's path ("" if the lab does not record).
func (l *Lab) saveRecording(s Scenario) (string, error) {
	rec := l.recording
	l.recording = nil
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
