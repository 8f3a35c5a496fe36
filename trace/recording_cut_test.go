package trace

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cutTestEvents are the events of the recordings these tests cut: lines of different
// lengths, so that cuts fall everywhere in a line.
func cutTestEvents() []Event {
	var events []Event
	for i := range 24 {
		events = append(events, at(float64(i), Event{Stage: Workqueue, Kind: Added, Source: "foos", Key: "default/" + strings.Repeat("a", i%7), QueueLen: i}))
	}
	return events
}

// cutTestRecording is a whole recording of cutTestEvents, gzipped or not.
func cutTestRecording(t *testing.T, gzipped bool) []byte {
	t.Helper()
	var b bytes.Buffer
	if !gzipped {
		require.NoError(t, WriteRecording(&b, RecordingHeader{Start: t0, Run: "cut"}, cutTestEvents()))
		return b.Bytes()
	}
	gz := gzip.NewWriter(&b)
	require.NoError(t, WriteRecording(gz, RecordingHeader{Start: t0, Run: "cut"}, cutTestEvents()))
	require.NoError(t, gz.Close())
	return b.Bytes()
}

// checkReadUpToACut reads a recording cut after n bytes and checks what a cut
// promises: the events read are the first ones written, none changed; and an error,
// if any, is ErrRecordingCut at the first line not read whole (the header is line 1).
// It returns how many events were read and the error.
func checkReadUpToACut(t *testing.T, file []byte, n int) (int, error) {
	t.Helper()
	want := cutTestEvents()
	h, events, err := ReadRecording(bytes.NewReader(file[:n]))
	require.LessOrEqual(t, len(events), len(want))
	if len(events) > 0 {
		require.Equal(t, want[:len(events)], events, "cut after %d bytes: the events read are the first ones, unchanged", n)
	}
	if err == nil {
		return len(events), nil
	}
	require.ErrorIs(t, err, ErrRecordingCut, "cut after %d bytes", n)
	var re *RecordingError
	require.ErrorAs(t, err, &re)
	if h.Format == "" {
		require.Equal(t, 1, re.Line, "cut after %d bytes, inside the header: %v", n, err)
		require.Empty(t, events)
	} else {
		require.Equal(t, len(events)+2, re.Line, "cut after %d bytes: the first line not read whole: %v", n, err)
	}
	return len(events), err
}

func TestAGzippedRecordingCutAnywhereReadsEveryWholeLineBeforeTheCut(t *testing.T) {
	file := cutTestRecording(t, true)
	last := -1
	// From 2 bytes: the reader knows a gzip stream by its first two.
	for n := 2; n < len(file); n++ {
		read, err := checkReadUpToACut(t, file, n)
		require.Error(t, err, "cut after %d of %d bytes: a gzip stream without its end is always a cut", n, len(file))
		require.GreaterOrEqual(t, read, last, "a longer file never reads fewer events")
		last = read
	}
	assert.Equal(t, len(cutTestEvents()), last, "a stream cut in its trailer has every line whole")

	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	_, err := gz.Write([]byte(header + "\n" + `{"t":1,"stage":"reflector","kind":"listed"}` + "\n" + `{"t":2,"sta`))
	require.NoError(t, err)
	require.NoError(t, gz.Flush())
	_, events, err := ReadRecording(&b)
	assert.Len(t, events, 1)
	assert.EqualError(t, err, "trace recording, line 3: cut short: the file ends in the middle of this line (and the gzip stream before its trailer)")
}

func TestAPlainRecordingCutInALineReadsEveryWholeLineBeforeIt(t *testing.T) {
	file := cutTestRecording(t, false)
	for n := 1; n < len(file); n++ {
		read, err := checkReadUpToACut(t, file, n)
		switch {
		case file[n-1] == '\n' || file[n] == '\n':
			// Why no error: a file cut at the end of a line looks whole; a line whose
			// object is whole is read, with its newline or without.
			require.NoError(t, err, "cut after %d bytes, at the end of a line", n)
		default:
			require.Error(t, err, "cut after %d bytes, inside line %d", n, read+2)
		}
	}

	line18 := bytes.Index(file, []byte(`{"t":16000000,`)) // the 17th event's line
	require.Positive(t, line18)
	_, events, err := ReadRecording(bytes.NewReader(file[:line18+5]))
	assert.Len(t, events, 16)
	assert.EqualError(t, err, "trace recording, line 18: cut short: the file ends in the middle of this line")
}

func TestARecordingFlushedByAProcessThatWasThenKilledReadsUpToItsLastFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "killed.jsonl.gz")
	rw, err := CreateRecording(path, RecordingHeader{Start: t0, Run: "killed"})
	require.NoError(t, err)
	events := cutTestEvents()
	for _, e := range events[:16] {
		rw.Record(e)
	}
	require.NoError(t, rw.Flush())
	// The process dies here: nothing after the flush reaches the file, no gzip trailer.
	// (The file's bytes are copied before Close writes the rest.)
	file, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, e := range events[16:] {
		rw.Record(e)
	}
	require.NoError(t, rw.Close())

	h, got, err := ReadRecording(bytes.NewReader(file))
	assert.Equal(t, "killed", h.Run)
	assert.Equal(t, events[:16], got, "every event flushed before the kill")
	require.ErrorIs(t, err, ErrRecordingCut)
	var re *RecordingError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 18, re.Line, "the header and 16 events are lines 1 to 17")
	assert.Equal(t, "trace recording, line 18: cut short: the gzip stream ends before its trailer (unexpected EOF), after 17 whole lines", err.Error())
}

func TestABadLineBeforeTheCutIsStillAnErrorNamingIt(t *testing.T) {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	_, err := gz.Write([]byte(header + "\n" + `{"t":1,"stage":"reflector","kind":"listed"}` + "\n" + `{"t":2,"stage":"reflector"` + "\n" + `{"t":3,"stage":"reflector","kind":"listed"}` + "\n"))
	require.NoError(t, err)
	require.NoError(t, gz.Flush())
	cut := b.Bytes() // flushed, never closed: no trailer

	_, events, err := ReadRecording(bytes.NewReader(cut))
	var re *RecordingError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, 3, re.Line, "the line that ends before its object does, with its newline, is bad, not cut: %v", err)
	assert.NotErrorIs(t, err, ErrRecordingCut)
	assert.Len(t, events, 1)
}

func TestACorruptGzipStreamIsAnErrorNotACut(t *testing.T) {
	file := cutTestRecording(t, true)
	corrupt := bytes.Clone(file)
	for i := len(corrupt) / 2; i < len(corrupt)/2+16; i++ {
		corrupt[i] ^= 0xff
	}
	_, _, err := ReadRecording(bytes.NewReader(corrupt))
	var re *RecordingError
	require.ErrorAs(t, err, &re)
	assert.NotErrorIs(t, err, ErrRecordingCut, "%v", err)
	assert.Greater(t, re.Line, 1, "%v", err)
}

func TestNextKeepsReportingTheCut(t *testing.T) {
	file := cutTestRecording(t, true)
	rr, err := NewRecordingReader(bytes.NewReader(file[:len(file)-4]))
	require.NoError(t, err)
	for range cutTestEvents() {
		_, err := rr.Next()
		require.NoError(t, err)
	}
	for range 2 {
		_, err := rr.Next()
		require.ErrorIs(t, err, ErrRecordingCut)
	}
}
