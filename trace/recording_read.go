package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// maxRecordingLine bounds one line of a recording. An event's line is a few hundred
// bytes; a longer one is not a recording this package wrote.
const maxRecordingLine = 1 << 20

// RecordingReader reads a recording one event at a time: a replay follows a file
// without holding it in memory.
type RecordingReader struct {
	header RecordingHeader
	lines  *bufio.Scanner
	line   int // the number of the line read last; the header is line 1
}

// NewRecordingReader reads the header of the recording in r, gzipped or not. A file
// that is not a recording, or one of a newer format version, gets a *RecordingError
// for line 1.
func NewRecordingReader(r io.Reader) (*RecordingReader, error) {
	br := bufio.NewReader(r)
	// Why peek: a gzip stream starts with the bytes 1f 8b, and no JSON line can.
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, &RecordingError{Line: 1, Err: fmt.Errorf("reading the gzip stream: %w", err)}
		}
		r = gz
	} else {
		r = br
	}
	rr := &RecordingReader{lines: bufio.NewScanner(r)}
	rr.lines.Buffer(make([]byte, 0, 64<<10), maxRecordingLine)
	b, err := rr.next()
	if err == io.EOF {
		return nil, &RecordingError{Line: 1, Err: errors.New("the file is empty: a recording starts with its header")}
	}
	if err != nil {
		return nil, err
	}
	if err := strictDecode(b, &rr.header); err != nil {
		return nil, &RecordingError{Line: 1, Err: fmt.Errorf("not a recording header: %w", err)}
	}
	if err := rr.header.check(); err != nil {
		return nil, &RecordingError{Line: 1, Err: err}
	}
	return rr, nil
}

// check says why h is not the header of a recording this package can read.
func (h RecordingHeader) check() error {
	switch {
	case h.Format != RecordingFormat:
		return fmt.Errorf("not a trace recording: its format is %q, not %q", h.Format, RecordingFormat)
	case h.Version > RecordingVersion:
		return fmt.Errorf("format version %d is newer than this reader's (%d): read it with a newer github.com/kubeinternals/informers", h.Version, RecordingVersion)
	case h.Version == 0:
		return errors.New(`the header has no "version"`)
	case h.Version < 0:
		return fmt.Errorf("format version %d does not exist (versions start at 1)", h.Version)
	case h.Start.IsZero():
		return errors.New(`the header has no "start"`)
	}
	return nil
}

// Header is the recording's header.
func (rr *RecordingReader) Header() RecordingHeader { return rr.header }

// Next returns the next event, or io.EOF after the last. A line that is not an event
// of this format gets a *RecordingError naming it; the events before it were read.
func (rr *RecordingReader) Next() (Event, error) {
	b, err := rr.next()
	if err != nil {
		return Event{}, err
	}
	var l eventLine
	if err := strictDecode(b, &l); err != nil {
		return Event{}, &RecordingError{Line: rr.line, Err: err}
	}
	e, err := l.event(rr.header.Start)
	if err != nil {
		return Event{}, &RecordingError{Line: rr.line, Err: err}
	}
	return e, nil
}

// next returns the next line that is not blank, io.EOF at the end, or a
// *RecordingError.
func (rr *RecordingReader) next() ([]byte, error) {
	for rr.lines.Scan() {
		rr.line++
		if b := bytes.TrimSpace(rr.lines.Bytes()); len(b) > 0 {
			return b, nil
		}
	}
	err := rr.lines.Err()
	switch {
	case err == nil:
		return nil, io.EOF
	case errors.Is(err, bufio.ErrTooLong):
		return nil, &RecordingError{Line: rr.line + 1, Err: fmt.Errorf("longer than %d bytes", maxRecordingLine)}
	default:
		return nil, &RecordingError{Line: rr.line + 1, Err: err}
	}
}

// strictDecode decodes one JSON object into v, refusing unknown fields and anything
// after the object.
//
// Why strict: a field this reader does not know means the file was written by
// another format version, or edited by hand; either way, dropping it would replay
// something that did not happen.
func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("the line goes on after its JSON object")
	}
	return nil
}

// ReadRecording reads a whole recording.
func ReadRecording(r io.Reader) (RecordingHeader, []Event, error) {
	rr, err := NewRecordingReader(r)
	if err != nil {
		return RecordingHeader{}, nil, err
	}
	var events []Event
	for {
		e, err := rr.Next()
		if err == io.EOF {
			return rr.header, events, nil
		}
		if err != nil {
			return rr.header, events, err
		}
		events = append(events, e)
	}
}

// OpenRecording reads the whole recording in the file path; its errors name the
// file.
func OpenRecording(path string) (RecordingHeader, []Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return RecordingHeader{}, nil, err
	}
	defer f.Close()
	h, events, err := ReadRecording(f)
	if err != nil {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return h, events, err
}
