package trace

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// RecordingWriter writes a recording as the events arrive: its Record method is a
// Sink, safe for concurrent use. Close flushes it and says whether every event was
// written.
//
// Pitfall: Record writes under a lock, to a buffer, on the reporting stage's
// goroutine. That is quick enough to record a lab run or a controller, but it is
// I/O on the pipeline's path: a Recorder, written out at the end with
// WriteRecording, keeps the run's timing better when memory allows.
type RecordingWriter struct {
	start time.Time
	// closers run in order on Close: the gzip stream, then the file.
	closers []io.Closer
	// flusher is the gzip stream, which Flush flushes too; nil otherwise.
	flusher any

	mu  sync.Mutex
	buf *bufio.Writer // guarded by mu, like the fields below
	enc *json.Encoder // encodes into buf
	// err is the first error writing; lost counts the events not written since.
	err    error
	lost   int
	closed bool
	// refused counts the events not written because a text field is not valid
	// UTF-8; firstRefused says which was the first, and why.
	refused      int
	firstRefused error
}

// ErrNotUTF8 is wrapped by the error Close returns when events were refused because a
// text field of theirs is not valid UTF-8.
//
// Why refuse rather than write: a JSON string cannot carry bytes that are not UTF-8,
// and encoding/json would replace each with U+FFFD without a word, so the replay
// would show a text that was never recorded. A refused event is counted and named;
// the events around it are written.
var ErrNotUTF8 = errors.New("a text field is not valid UTF-8")

// NewRecordingWriter writes h to w as the recording's header and returns the writer
// of its events. It sets h's Format and Version, and its Start to now if zero.
func NewRecordingWriter(w io.Writer, h RecordingHeader) (*RecordingWriter, error) {
	h.Format, h.Version = RecordingFormat, RecordingVersion
	for _, f := range [...]struct{ name, value string }{{"Program", h.Program}, {"Run", h.Run}, {"Title", h.Title}} {
		if !utf8.ValidString(f.value) {
			return nil, fmt.Errorf("writing the recording's header: %w: field %s: %q", ErrNotUTF8, f.name, f.value)
		}
	}
	if h.Start.IsZero() {
		h.Start = time.Now()
	}
	rw := &RecordingWriter{start: h.Start, buf: bufio.NewWriterSize(w, 64<<10)}
	rw.enc = json.NewEncoder(rw.buf)
	// Why: the sentences and keys are read by people; "<" should stay "<".
	rw.enc.SetEscapeHTML(false)
	if err := rw.enc.Encode(h); err != nil {
		return nil, fmt.Errorf("writing the recording's header: %w", err)
	}
	return rw, nil
}

// CreateRecording creates the file path (replacing one that exists) and returns a
// writer of a recording into it, gzipped if path ends in ".gz". Close closes the file.
func CreateRecording(path string, h RecordingHeader) (*RecordingWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	var w io.Writer = f
	var closers []io.Closer
	if strings.HasSuffix(path, ".gz") {
		gz := gzip.NewWriter(f)
		w, closers = gz, []io.Closer{gz}
	}
	rw, err := NewRecordingWriter(w, h)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rw.closers = append(closers, f)
	if len(closers) > 0 {
		rw.flusher = closers[0]
	}
	return rw, nil
}

// Record writes e as one line. An event Record cannot write (the file's disk is full,
// or Close was called) is counted, and Close reports how many were lost.
func (rw *RecordingWriter) Record(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.err != nil || rw.closed {
		rw.lost++
		return
	}
	if err := checkUTF8(e); err != nil {
		if rw.refused == 0 {
			rw.firstRefused = err
		}
		rw.refused++
		return
	}
	if err := rw.enc.Encode(lineOf(e, rw.start)); err != nil {
		rw.err = err
		rw.lost++
	}
}

// Flush writes out the events buffered so far. A long-running program flushes now
// and then, so that a crash loses only the events since.
func (rw *RecordingWriter) Flush() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.err != nil || rw.closed {
		return rw.err
	}
	if err := rw.buf.Flush(); err != nil {
		rw.err = err
		return err
	}
	if f, ok := rw.flusher.(interface{ Flush() error }); ok {
		if err := f.Flush(); err != nil {
			rw.err = err
			return err
		}
	}
	return nil
}

// Close flushes the recording and closes what CreateRecording opened. Its error says
// why events were lost, and how many: a write error, or events recorded after Close.
// Calling Close again reports the events lost since.
func (rw *RecordingWriter) Close() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	var errs []error
	if !rw.closed {
		rw.closed = true
		if err := rw.buf.Flush(); err != nil && rw.err == nil {
			rw.err = err
		}
		for _, c := range rw.closers {
			errs = append(errs, c.Close())
		}
	}
	switch {
	case rw.err != nil:
		errs = append(errs, fmt.Errorf("recording lost %d events: %w", rw.lost, rw.err))
	case rw.lost > 0:
		errs = append(errs, fmt.Errorf("recording lost %d events recorded after Close", rw.lost))
	}
	if rw.refused > 0 {
		errs = append(errs, fmt.Errorf("recording refused %d events; the first: %w", rw.refused, rw.firstRefused))
	}
	return errors.Join(errs...)
}

// checkUTF8 returns an error wrapping ErrNotUTF8 that names e's first text field that
// is not valid UTF-8, or nil.
func checkUTF8(e Event) error {
	for _, f := range [...]struct{ name, value string }{
		{"Stage", string(e.Stage)}, {"Kind", string(e.Kind)}, {"Source", e.Source}, {"Informer", e.Informer},
		{"Key", e.Key}, {"ResourceVersion", e.ResourceVersion}, {"Type", e.Type}, {"Reason", e.Reason},
		{"Detail", e.Detail}, {"Attrs", e.Attrs},
	} {
		if !utf8.ValidString(f.value) {
			return fmt.Errorf("%w: field %s of a %s %q event (key %q): %q", ErrNotUTF8, f.name, e.Stage, e.Kind, e.Key, f.value)
		}
	}
	return nil
}

// WriteRecording writes a whole recording: h as its header, then events. It is the
// way to save what a Recorder kept. A zero h.Start becomes the first event's time.
func WriteRecording(w io.Writer, h RecordingHeader, events []Event) error {
	rw, err := NewRecordingWriter(w, withStart(h, events))
	if err != nil {
		return err
	}
	return rw.recordAll(events)
}

// SaveRecording writes a whole recording to the file path (gzipped if it ends in
// ".gz"), as WriteRecording does to a writer: the way to save what a Recorder kept.
func SaveRecording(path string, h RecordingHeader, events []Event) error {
	rw, err := CreateRecording(path, withStart(h, events))
	if err != nil {
		return err
	}
	if err := rw.recordAll(events); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// withStart is h with a zero Start set to the first event's time.
func withStart(h RecordingHeader, events []Event) RecordingHeader {
	if h.Start.IsZero() && len(events) > 0 {
		h.Start = events[0].Time
	}
	return h
}

// recordAll records events and closes the writer.
func (rw *RecordingWriter) recordAll(events []Event) error {
	for _, e := range events {
		rw.Record(e)
	}
	return rw.Close()
}
