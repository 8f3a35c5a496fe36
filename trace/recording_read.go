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
	"reflect"
)

// maxRecordingLine bounds one line of a recording. An event's line is a few hundred
// bytes; a longer one is not a recording this package wrote.
const maxRecordingLine = 1 << 20

// MaxRecordingSize bounds what ReadRecording and OpenRecording read into memory: 16 MiB
// of JSON lines, counted after gunzip, blank lines included. A recording past it gets
// a *RecordingError wrapping ErrRecordingTooLarge, at the line that goes past it.
//
// Why a limit, and not a replay that streams: the explorer's player seeks backwards
// and forwards and shows the recording's length, so it holds every event in one
// slice; streaming would read the file again on every seek back. A limit on that one
// slice is the simpler bound: a gzip bomb (a small file that inflates up to a
// thousandfold), or a recording left running for days, gets an error instead of the
// machine's memory.
//
// Why bytes and not events: they bound both. An event's line is at least 25 bytes
// ({"stage":"x","kind":"y"} and its newline), so 16 MiB holds at most about 670,000
// events; and the bytes bound the strings the events hold, which may be up to a line
// long (maxRecordingLine).
//
// Why 16 MiB: more than sixteen times the largest recording in docs/recordings
// (TestTheCommittedRecordingsAreFarBelowTheLimit). NewRecordingReader has no limit: it
// holds one line at a time.
const MaxRecordingSize = 16 << 20

// ErrRecordingTooLarge is a recording larger than MaxRecordingSize, read whole.
var ErrRecordingTooLarge = errors.New("recording too large")

// ErrRecordingCut is a recording that ends in the middle: its gzip stream ends before
// its trailer, or its last line ends before the JSON object on it does. That is what
// a process killed while it recorded leaves behind (its last write may stop anywhere
// in a line), or a file copied while it was written. Its lines up to the cut are
// whole: ReadRecording returns their events with the error, a *RecordingError whose
// Line is the first line not read whole.
var ErrRecordingCut = errors.New("cut short")

// RecordingReader reads a recording one event at a time: a replay follows a file
// without holding it in memory.
type RecordingReader struct {
	header RecordingHeader
	r      *bufio.Reader
	line   int    // the number of the line read last; the header is line 1
	long   []byte // a line longer than r's buffer, put together
	// size counts the bytes read, newlines included; past limit (if not 0), the
	// stream ends with ErrRecordingTooLarge.
	size, limit int
	// err is what ended the stream (a cut, a corrupt gzip stream, a read error):
	// every later call returns it again.
	err error
}

// NewRecordingReader reads the header of the recording in r, gzipped or not. A file
// that is not a recording, or one of a newer format version, gets a *RecordingError
// for line 1; so does one cut before its header was whole (ErrRecordingCut).
func NewRecordingReader(r io.Reader) (*RecordingReader, error) {
	return newRecordingReader(r, 0)
}

// newRecordingReader is NewRecordingReader that reads at most limit bytes of lines
// (0: no limit).
func newRecordingReader(r io.Reader, limit int) (*RecordingReader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	// Why peek: a gzip stream starts with the bytes 1f 8b, and no JSON line can.
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &RecordingError{Line: 1, Err: fmt.Errorf("%w: the gzip stream ends inside its own header", ErrRecordingCut)}
		}
		if err != nil {
			return nil, &RecordingError{Line: 1, Err: fmt.Errorf("reading the gzip stream: %w", err)}
		}
		br = bufio.NewReaderSize(gz, 64<<10)
	}
	rr := &RecordingReader{r: br, limit: limit}
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
	// Why: the writer leaves an empty list out, so [] and no list are one header; a
	// header read back from its own writing must be the header read.
	p := &rr.header.Pipeline
	if len(p.Informers) == 0 {
		p.Informers = nil
	}
	if len(p.Handlers) == 0 {
		p.Handlers = nil
	}
	if len(p.Workqueues) == 0 {
		p.Workqueues = nil
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
// A recording cut short gets one wrapping ErrRecordingCut, from then on.
func (rr *RecordingReader) Next() (Event, error) {
	b, err := rr.next()
	if err != nil {
		return Event{}, err
	}
	var l eventLine
	if err := strictDecode(b, &l); err != nil {
		return Event{}, &RecordingError{Line: rr.line, Err: err}
	}
	e, err := l.event(rr.header.Start, rr.header.Version)
	if err != nil {
		return Event{}, &RecordingError{Line: rr.line, Err: err}
	}
	return e, nil
}

// next returns the next line that is not blank, without its newline; io.EOF at the
// end; or a *RecordingError, which ends the stream.
//
// A line is whole when its newline follows it. The last line may lack one (a file
// written by hand): it is read if the JSON in it is whole, and is the place of a cut
// if the JSON ends before its object does.
//
// Why not bufio.Scanner: when its reader fails, it hands over the bytes it holds as
// a last line, so a cut line would read as a bad one; and it cannot say whether a
// line had its newline.
func (rr *RecordingReader) next() ([]byte, error) {
	for rr.err == nil {
		b, whole, err := rr.readLine()
		if len(bytes.TrimSpace(b)) > 0 || whole {
			rr.line++
		}
		b = bytes.TrimSpace(b)
		switch {
		case rr.limit > 0 && rr.size > rr.limit:
			rr.err = &RecordingError{Line: max(rr.line, 1), Err: fmt.Errorf("%w: more than %s of JSON lines after gunzip, the most ReadRecording holds in memory; NewRecordingReader reads one event at a time",
				ErrRecordingTooLarge, sizeText(rr.limit))}
		case err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF):
			// A corrupt gzip stream, a line too long, a failing read: not a cut.
			rr.err = &RecordingError{Line: rr.line + 1, Err: err}
			if len(b) > 0 {
				rr.err = &RecordingError{Line: rr.line, Err: err}
			}
		case !whole && len(b) > 0 && endsEarly(b):
			how := "the file ends in the middle of this line"
			if errors.Is(err, io.ErrUnexpectedEOF) {
				how += " (and the gzip stream before its trailer)"
			}
			rr.err = &RecordingError{Line: rr.line, Err: fmt.Errorf("%w: %s", ErrRecordingCut, how)}
		case len(b) > 0:
			// A whole line; or the last, without its newline, whose object is whole.
			// A stream cut just after it is reported by the next call.
			return b, nil
		case errors.Is(err, io.ErrUnexpectedEOF):
			rr.err = &RecordingError{Line: rr.line + 1, Err: fmt.Errorf("%w: the gzip stream ends before its trailer (%w), after %d whole lines", ErrRecordingCut, err, rr.line)}
		case errors.Is(err, io.EOF):
			rr.err = io.EOF
		}
	}
	return nil, rr.err
}

// readLine reads up to the next newline. whole says the newline was there; err is
// why the line ends without it (io.EOF at the end of the file).
func (rr *RecordingReader) readLine() (b []byte, whole bool, err error) {
	rr.long = rr.long[:0]
	for {
		chunk, err := rr.r.ReadSlice('\n')
		rr.size += len(chunk)
		if len(rr.long)+len(chunk) > maxRecordingLine+1 { // +1: the newline
			return nil, false, fmt.Errorf("longer than %d bytes", maxRecordingLine)
		}
		switch {
		case err == nil:
			chunk = chunk[:len(chunk)-1]
			if len(rr.long) == 0 {
				return chunk, true, nil
			}
			return append(rr.long, chunk...), true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			rr.long = append(rr.long, chunk...)
		default:
			return append(rr.long, chunk...), false, err
		}
	}
}

// sizeText is n bytes in MiB, if it is a whole number of them.
func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// endsEarly reports whether the JSON in b ends before its first value does: b is
// the beginning of a line that was cut, not a line that is wrong.
func endsEarly(b []byte) bool {
	var v json.RawMessage
	return errors.Is(json.NewDecoder(bytes.NewReader(b)).Decode(&v), io.ErrUnexpectedEOF)
}

// strictDecode decodes one JSON object into v, refusing unknown fields, anything
// after the object, and what checkNames refuses: a name in another case than the
// format's, a name given twice, a null.
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
	// Why the comparison first: a line exactly as the writer writes it — every line
	// this package wrote — has the format's names, once each, and no null. Walking
	// its tokens again would take twice as long as decoding it; only a line written
	// some other way (edited by hand, keys reordered, spaces) is walked.
	if again, err := json.Marshal(v); err == nil && bytes.Equal(again, b) {
		return nil
	}
	return checkNames(b, reflect.TypeOf(v))
}

// ReadRecording reads a whole recording, of at most MaxRecordingSize bytes of lines.
// On an error it returns the events before the line the error names.
func ReadRecording(r io.Reader) (RecordingHeader, []Event, error) {
	rr, err := newRecordingReader(r, MaxRecordingSize)
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

// OpenRecording reads the whole recording in the file path, as ReadRecording does;
// its errors name the file.
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
