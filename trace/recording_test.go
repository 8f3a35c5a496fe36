package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fullEvent is an Event with every field set to a value of its own, found by
// reflection: a field added to Event is set here without anyone remembering to.
func fullEvent(t *testing.T) Event {
	var e Event
	v := reflect.ValueOf(&e).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Interface().(type) {
		case time.Time:
			f.Set(reflect.ValueOf(t0.Add(1500 * time.Millisecond)))
		case time.Duration:
			f.SetInt(int64(250 * time.Millisecond))
		case bool:
			f.SetBool(true)
		default:
			switch f.Kind() {
			case reflect.String:
				f.SetString(v.Type().Field(i).Name + " <value>")
			case reflect.Int:
				f.SetInt(int64(i + 1))
			default:
				t.Fatalf("Event.%s has type %s, which fullEvent does not fill", v.Type().Field(i).Name, f.Type())
			}
		}
	}
	return e
}

func TestARecordingKeepsEveryEventField(t *testing.T) {
	want := fullEvent(t)
	var b bytes.Buffer
	require.NoError(t, WriteRecording(&b, RecordingHeader{Start: t0}, []Event{want, at(2000, Event{Stage: Workqueue, Kind: Got})}))
	_, got, err := ReadRecording(&b)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.True(t, want.Time.Equal(got[0].Time), "time: %v, want %v", got[0].Time, want.Time)
	got[0].Time = want.Time
	assert.Equal(t, want, got[0], "every field of Event survives a recording (a new field needs a new format version)")
	assert.Equal(t, Event{Time: t0.Add(2 * time.Second), Stage: Workqueue, Kind: Got}, got[1])
}

func TestARecordingLineLeavesOutZeroFields(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteRecording(&b, RecordingHeader{Start: t0, Program: "test"}, []Event{
		at(2000, Event{Stage: Workqueue, Kind: Got, Source: "foos", Key: "default/<a>", QueueLen: 0, Duration: time.Millisecond}),
	}))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 2)
	assert.Equal(t, `{"format":"kubeinternals-trace","version":2,"start":"2026-11-23T09:00:00Z","program":"test","pipeline":{}}`, lines[0])
	assert.Equal(t, `{"t":2000000000,"stage":"workqueue","kind":"got","source":"foos","key":"default/<a>","duration":1000000}`, lines[1])
}

func TestARecordingKeepsItsHeader(t *testing.T) {
	want := RecordingHeader{
		Start: time.Date(2026, 11, 26, 11, 40, 0, 123456789, time.UTC), Program: "lab", Run: "watch-cut", Title: "What happens when the watch is cut?",
		Pipeline: Pipeline{
			Informers:  []InformerInfo{{Source: "foos", Queue: RealFIFO, List: "watch-list"}},
			Handlers:   []HandlerInfo{{Name: "enqueueFoo", Informer: "foos"}},
			Workqueues: []string{"foos"}, Workers: 2,
		},
	}
	var b bytes.Buffer
	rw, err := NewRecordingWriter(&b, want)
	require.NoError(t, err)
	require.NoError(t, rw.Close())
	h, events, err := ReadRecording(&b)
	require.NoError(t, err)
	assert.Empty(t, events)
	want.Format, want.Version = RecordingFormat, RecordingVersion
	assert.Equal(t, want, h, "the writer sets the format and version")
}

func TestAGzippedRecordingReadsBackFromItsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl.gz")
	rw, err := CreateRecording(path, RecordingHeader{Start: t0, Run: "gz"})
	require.NoError(t, err)
	rw.Record(at(1, Event{Stage: Reflector, Kind: Listed, Source: "foos", Items: 3}))
	require.NoError(t, rw.Flush())
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	_, err = gzip.NewReader(f)
	require.NoError(t, err, "a .gz path is gzipped")

	h, events, err := OpenRecording(path)
	var re *RecordingError
	require.ErrorAs(t, err, &re, "flushed but not closed: the gzip stream has no end yet")
	assert.ErrorIs(t, err, ErrRecordingCut)
	assert.Equal(t, 3, re.Line, "the header and the event (lines 1 and 2) were flushed; the stream ends unfinished after them: %v", err)
	assert.Equal(t, "gz", h.Run)
	assert.Len(t, events, 1, "the flushed event reads back")
	require.NoError(t, rw.Close())

	h, events, err = OpenRecording(path)
	require.NoError(t, err)
	assert.Equal(t, "gz", h.Run)
	assert.Equal(t, []Event{at(1, Event{Stage: Reflector, Kind: Listed, Source: "foos", Items: 3})}, events)
}

func TestSaveRecordingWritesAWholeRecordingToAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "saved.jsonl.gz")
	events := []Event{at(5, Event{Stage: Workqueue, Kind: Got, Key: "a"}), at(7, Event{Stage: Workqueue, Kind: Done, Key: "a"})}
	require.NoError(t, SaveRecording(path, RecordingHeader{Run: "saved"}, events))
	h, got, err := OpenRecording(path)
	require.NoError(t, err)
	assert.True(t, h.Start.Equal(events[0].Time), "a zero start becomes the first event's time")
	assert.Equal(t, events, got)
	assert.Error(t, SaveRecording(filepath.Join(t.TempDir(), "no", "such", "dir.jsonl"), RecordingHeader{}, events))
}

const header = `{"format":"kubeinternals-trace","version":1,"start":"2026-11-23T09:00:00Z"}`

func TestABadRecordingGetsAnErrorNamingItsLine(t *testing.T) {
	good := `{"t":1,"stage":"reflector","kind":"listed"}`
	for _, c := range []struct {
		name, file string
		line       int
		says       string
		readBefore int // events read before the bad line
	}{
		{"empty", "", 1, "the file is empty", 0},
		{"blank", "\n\n  \n", 1, "the file is empty", 0},
		{"not JSON", "hello\n", 1, "not a recording header: invalid character 'h'", 0},
		{"another JSON Lines file", `{"format":"otel","version":1,"start":"2026-11-23T09:00:00Z"}`, 1, `its format is "otel"`, 0},
		{"no format", `{"version":1,"start":"2026-11-23T09:00:00Z"}`, 1, `its format is ""`, 0},
		{"newer version", `{"format":"kubeinternals-trace","version":3,"start":"2026-11-23T09:00:00Z"}`, 1, "format version 3 is newer than this reader's (2)", 0},
		{"a log line in a version 1 file", header + "\n" + good + "\n" + `{"t":2,"stage":"log","kind":"logged","type":"INFO","detail":"hello"}`, 3, `a log line (stage "log", "attrs") in a version 1 recording: log lines came with version 2`, 1},
		{"attrs in a version 1 file", header + "\n" + `{"t":2,"stage":"lab","kind":"logged","attrs":"a=b"}`, 2, `a log line (stage "log", "attrs") in a version 1 recording`, 0},
		{"no version", `{"format":"kubeinternals-trace","start":"2026-11-23T09:00:00Z"}`, 1, `no "version"`, 0},
		{"negative version", `{"format":"kubeinternals-trace","version":-1,"start":"2026-11-23T09:00:00Z"}`, 1, "does not exist", 0},
		{"no start", `{"format":"kubeinternals-trace","version":1}`, 1, `no "start"`, 0},
		{"unknown header field", `{"format":"kubeinternals-trace","version":1,"start":"2026-11-23T09:00:00Z","color":1}`, 1, `unknown field "color"`, 0},
		{"broken event", header + "\n" + good + "\n{\"t\":\n", 3, "unexpected EOF", 1},
		{"unknown event field", header + "\n" + good + "\n\n" + `{"t":1,"stage":"reflector","kind":"listed","colour":"red"}`, 4, `unknown field "colour"`, 1},
		{"no kind", header + "\n" + `{"t":1,"stage":"reflector"}`, 2, `needs a "stage" and a "kind"`, 0},
		{"wrong type", header + "\n" + `{"t":"soon","stage":"reflector","kind":"listed"}`, 2, "cannot unmarshal string", 0},
		{"negative count", header + "\n" + `{"t":1,"stage":"realfifo","kind":"queued","queueLen":-1}`, 2, "a count is negative", 0},
		{"negative duration", header + "\n" + `{"t":1,"stage":"reflector","kind":"backoff","duration":-5}`, 2, "negative", 0},
		{"two objects on a line", header + "\n" + good + good, 2, "goes on after its JSON object", 0},
		{"an array", header + "\n[1]", 2, "cannot unmarshal array", 0},
		{"a line too long", header + "\n" + `{"t":1,"stage":"reflector","kind":"listed","detail":"` + strings.Repeat("x", maxRecordingLine) + `"}`, 2, "longer than", 0},
		{"an event field name in another case", header + "\n" + good + "\n" + `{"t":1,"Stage":"reflector","kind":"listed"}`, 3, `field "Stage": names are case-sensitive, and this one is "stage"`, 1},
		{"an event field name in capitals", header + "\n" + `{"T":1,"stage":"reflector","kind":"listed"}`, 2, `field "T": names are case-sensitive, and this one is "t"`, 0},
		{"an event field name that folds to one (the long s)", header + "\n" + `{"t":1,"ſtage":"reflector","kind":"listed"}`, 2, `field "ſtage": names are case-sensitive, and this one is "stage"`, 0},
		{"a header field name in another case", `{"format":"kubeinternals-trace","Version":1,"start":"2026-11-23T09:00:00Z"}`, 1, `field "Version": names are case-sensitive, and this one is "version"`, 0},
		{"a nested header field name in another case", `{"format":"kubeinternals-trace","version":1,"start":"2026-11-23T09:00:00Z","pipeline":{"informers":[{"source":"a"},{"Source":"b"}]}}`, 1, `field "pipeline.informers[1].Source": names are case-sensitive, and this one is "source"`, 0},
		{"an event field twice", header + "\n" + `{"t":1,"stage":"reflector","kind":"listed","kind":"watch event"}`, 2, `field "kind" appears twice`, 0},
		{"an event field twice, once in capitals", header + "\n" + `{"t":1,"stage":"reflector","kind":"listed","KIND":"watch event"}`, 2, `field "KIND": names are case-sensitive`, 0},
		{"a header field twice", `{"format":"kubeinternals-trace","version":1,"version":1,"start":"2026-11-23T09:00:00Z"}`, 1, `field "version" appears twice`, 0},
		{"a nested header field twice", `{"format":"kubeinternals-trace","version":1,"start":"2026-11-23T09:00:00Z","pipeline":{"handlers":[{"name":"a","informer":"x","name":"b"}]}}`, 1, `field "pipeline.handlers[0].name" appears twice`, 0},
		{"an event field that is null", header + "\n" + `{"t":1,"stage":"reflector","kind":"listed","items":null}`, 2, `field "items" is null: a recording leaves out a field it has no value for`, 0},
		{"a header field that is null", `{"format":"kubeinternals-trace","version":1,"start":"2026-11-23T09:00:00Z","pipeline":null}`, 1, `field "pipeline" is null`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, events, err := ReadRecording(strings.NewReader(c.file))
			var re *RecordingError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, c.line, re.Line, "%v", err)
			assert.Contains(t, err.Error(), c.says)
			assert.Contains(t, err.Error(), "line ")
			assert.Len(t, events, c.readBefore, "the events before the bad line are kept")
			assert.NotErrorIs(t, err, ErrRecordingCut, "a bad line is not a cut")
		})
	}
}

// TestTheReaderTakesEveryWayJSONWritesTheSameObject: what the strict reader refuses is
// names that are not the format's and names given twice; JSON's own freedoms stay —
// fields in any order, space between tokens, a name written with escapes.
func TestTheReaderTakesEveryWayJSONWritesTheSameObject(t *testing.T) {
	want := at(1500, Event{Stage: Reflector, Kind: Listed, Source: "foos", Items: 3, Paged: true})
	for _, line := range []string{
		`{"t":1500000000,"stage":"reflector","kind":"listed","source":"foos","items":3,"paged":true}`,
		`{"paged":true,"items":3,"source":"foos","kind":"listed","stage":"reflector","t":1500000000}`,
		` { "t" : 1500000000 , "stage" : "reflector" , "kind" : "listed" , "source" : "foos" , "items" : 3 , "paged" : true } `,
		`{"t":1500000000,"st\u0061ge":"reflector","kind":"listed","source":"foos","items":3,"paged":true}`,
	} {
		t.Run(line, func(t *testing.T) {
			h, events, err := ReadRecording(strings.NewReader(`{"pipeline":{"informers":[{"queue":"realfifo","source":"foos"}]},"start":"2026-11-23T09:00:00Z","version":1,"format":"kubeinternals-trace"}` + "\n" + line + "\n"))
			require.NoError(t, err)
			assert.Equal(t, []InformerInfo{{Source: "foos", Queue: RealFIFO}}, h.Pipeline.Informers)
			assert.Equal(t, []Event{want}, events)
		})
	}
}

func TestABrokenGzipStreamGetsAClearError(t *testing.T) {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	_, _ = io.WriteString(gz, header+"\n"+strings.Repeat(`{"t":1,"stage":"reflector","kind":"listed"}`+"\n", 100))
	require.NoError(t, gz.Close())
	cut := b.Bytes()[:b.Len()-10] // the trailer (CRC, size) and a little more
	_, events, err := ReadRecording(bytes.NewReader(cut))
	var re *RecordingError
	require.ErrorAs(t, err, &re)
	require.ErrorIs(t, err, ErrRecordingCut, "a stream that ends early is a cut")
	assert.Contains(t, err.Error(), "unexpected EOF")
	assert.Equal(t, len(events)+2, re.Line, "the first line not read whole: %v", err)

	_, _, err = ReadRecording(bytes.NewReader([]byte{0x1f, 0x8b, 1, 2}))
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 1, re.Line)
	assert.ErrorIs(t, err, ErrRecordingCut, "the gzip header itself is cut")

	_, _, err = ReadRecording(bytes.NewReader([]byte{0x1f, 0x8b, 1, 2, 0, 0, 0, 0, 0, 0}))
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 1, re.Line)
	assert.Contains(t, err.Error(), "reading the gzip stream")
	assert.NotErrorIs(t, err, ErrRecordingCut, "a gzip header that is whole and wrong is not a cut")
}

// failingWriter accepts n bytes, then fails.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestAnEventTheWriterCouldNotWriteIsCountedAndReported(t *testing.T) {
	// The header fits, the events (64 KiB of buffer each time) do not.
	rw, err := NewRecordingWriter(&failingWriter{n: 1 << 10}, RecordingHeader{Start: t0})
	require.NoError(t, err)
	big := Event{Stage: Reflector, Kind: Listed, Detail: strings.Repeat("x", 40<<10)}
	for range 3 {
		rw.Record(big)
	}
	err = rw.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "disk full")
	assert.Contains(t, err.Error(), "lost 2 events", "the first event filled the buffer; the second's write failed, the third was not tried")

	var b bytes.Buffer
	rw, err = NewRecordingWriter(&b, RecordingHeader{Start: t0})
	require.NoError(t, err)
	rw.Record(Event{Stage: Reflector, Kind: Listed})
	require.NoError(t, rw.Close())
	rw.Record(Event{Stage: Reflector, Kind: Listed})
	assert.ErrorContains(t, rw.Close(), "lost 1 events recorded after Close")
	_, events, err := ReadRecording(&b)
	require.NoError(t, err)
	assert.Len(t, events, 1)
}

func TestPipelineOfNamesWhatReportedInOrder(t *testing.T) {
	events := []Event{
		{Stage: Reflector, Kind: ListStarted, Source: "foos", Type: "watch-list"},
		{Stage: Reflector, Kind: ListStarted, Source: "deployments", Type: "list"},
		{Stage: DeltaFIFO, Kind: Queued, Source: "deployments"},
		{Stage: RealFIFO, Kind: Queued, Source: "foos"},
		{Stage: Reflector, Kind: ListStarted, Source: "foos", Type: "list"}, // a later relist: the first list names the mode
		{Stage: Listener, Kind: Buffered, Source: "enqueueFoo", Informer: "foos"},
		{Stage: Listener, Kind: Buffered, Source: "handleDeployment", Informer: "deployments"},
		{Stage: Listener, Kind: HandlerCalled, Source: "enqueueFoo", Informer: "foos"},
		{Stage: Workqueue, Kind: Added, Source: "foos"},
		{Stage: Controller, Kind: Mapped, Source: "configmaps"}, // a mapping is not an informer
		{Stage: Workqueue, Kind: Added, Source: "foos"},
		{Stage: Informer, Kind: Applied, Source: "secrets"},
	}
	assert.Equal(t, Pipeline{
		Informers: []InformerInfo{
			{Source: "foos", Queue: RealFIFO, List: "watch-list"},
			{Source: "deployments", Queue: DeltaFIFO, List: "list"},
			{Source: "secrets"},
		},
		Handlers:   []HandlerInfo{{Name: "enqueueFoo", Informer: "foos"}, {Name: "handleDeployment", Informer: "deployments"}},
		Workqueues: []string{"foos"},
	}, PipelineOf(events))
}

// FuzzReadRecording: whatever the bytes, the reader returns events or an error and
// never panics; what it reads, written again, reads back the same.
func FuzzReadRecording(f *testing.F) {
	var b bytes.Buffer
	_ = WriteRecording(&b, RecordingHeader{Start: t0, Program: "fuzz", Pipeline: Pipeline{Informers: []InformerInfo{{Source: "foos"}}}},
		[]Event{{Time: t0, Stage: Reflector, Kind: Listed, Items: 2}, {Time: t0.Add(time.Second), Stage: Workqueue, Kind: Got, Key: "a", Duration: 5}})
	f.Add(b.Bytes())
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write(b.Bytes())
	_ = w.Close()
	f.Add(gz.Bytes())
	f.Add([]byte(header + "\n" + `{"t":-3,"stage":"x","kind":"y","paged":true}`))
	f.Add([]byte(`{"format":"kubeinternals-trace","version":1,"start":"2026-11-23T09:00:00Z","pipeline":{"informers":[],"handlers":[],"workqueues":[]}}`))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, events, err := ReadRecording(bytes.NewReader(data))
		if err != nil {
			var re *RecordingError
			if !errors.As(err, &re) || re.Line < 1 {
				t.Fatalf("an error that names no line: %v", err)
			}
			return
		}
		var again bytes.Buffer
		if err := WriteRecording(&again, h, events); err != nil {
			t.Fatalf("writing back what was read: %v", err)
		}
		h2, events2, err := ReadRecording(&again)
		if err != nil {
			t.Fatalf("reading back what was written: %v", err)
		}
		if !h2.Start.Equal(h.Start) || len(events2) != len(events) {
			t.Fatalf("read back %d events from %v, want %d from %v", len(events2), h2.Start, len(events), h.Start)
		}
		for i := range events {
			if !events2[i].Time.Equal(events[i].Time) {
				t.Fatalf("event %d: time %v, want %v", i, events2[i].Time, events[i].Time)
			}
			events2[i].Time = events[i].Time
		}
		h2.Start = h.Start
		h.Version = RecordingVersion // written back, a recording is at the writer's version
		if !reflect.DeepEqual(h2, h) || !reflect.DeepEqual(events2, events) {
			t.Fatalf("read back\n%+v\n%+v\nwant\n%+v\n%+v", h2, events2, h, events)
		}
	})
}

// A recording keeps what it was given or refuses it: an event with a text field that
// is not valid UTF-8 (which a JSON string cannot carry, and encoding/json would
// replace without a word) is not written, and Close names the field; the events around
// it are written as they were. A header field likewise is refused at once.
func TestATextThatIsNotUTF8IsRefusedNotChanged(t *testing.T) {
	var b bytes.Buffer
	rw, err := NewRecordingWriter(&b, RecordingHeader{Start: t0})
	require.NoError(t, err)
	rw.Record(Event{Time: t0, Stage: Reflector, Kind: Listed, Key: "ns/a", Detail: "ü before"})
	rw.Record(Event{Time: t0, Stage: Log, Kind: Logged, Detail: "bad \xff byte"})
	rw.Record(Event{Time: t0, Stage: Reflector, Kind: Listed, Key: "ns/b", Reason: "\xc3"})
	rw.Record(Event{Time: t0, Stage: Reflector, Kind: Listed, Key: "ns/c", Detail: "after"})
	err = rw.Close()
	require.ErrorIs(t, err, ErrNotUTF8)
	assert.ErrorContains(t, err, `recording refused 2 events; the first: a text field is not valid UTF-8: field Detail of a log "logged" event (key ""): "bad \xff byte"`)

	_, events, err := ReadRecording(&b)
	require.NoError(t, err)
	require.Len(t, events, 2)
	assert.Equal(t, "ü before", events[0].Detail, "a valid multi-byte text is kept as it was")
	assert.Equal(t, "ns/c", events[1].Key, "the events after a refused one are written")
	assert.NotContains(t, b.String(), "\ufffd", "nothing was replaced")

	_, err = NewRecordingWriter(&b, RecordingHeader{Title: "a \xfe title"})
	require.ErrorIs(t, err, ErrNotUTF8)
	assert.ErrorContains(t, err, "field Title")
}
