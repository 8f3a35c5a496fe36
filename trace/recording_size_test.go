package trace

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bombLine is the line a gzip bomb repeats: an event with a 1000-byte detail.
var bombLine = `{"t":0,"stage":"workqueue","kind":"added","detail":"` + strings.Repeat("x", 1000) + `"}` + "\n"

// gzipBomb is a gzipped recording whose events decode to at least size bytes: a small
// file that would fill memory if read whole. It is a header, then one gzip member of
// 1 MiB of bombLine repeated as often as it takes (a gzip file may hold several
// members, read as one stream): compressing 1 MiB once is quicker than compressing
// size bytes, and the reader sees the same.
func gzipBomb(t *testing.T, size int) []byte {
	t.Helper()
	member := func(s string) []byte {
		var b bytes.Buffer
		gz, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
		require.NoError(t, err)
		_, err = io.WriteString(gz, s)
		require.NoError(t, err)
		require.NoError(t, gz.Close())
		return b.Bytes()
	}
	lines := strings.Repeat(bombLine, (1<<20)/len(bombLine))
	mib := member(lines)
	b := member(header + "\n")
	for written := 0; written < size; written += len(lines) {
		b = append(b, mib...)
	}
	return b
}

func TestReadRecordingRefusesARecordingLargerThanItsLimit(t *testing.T) {
	bomb := gzipBomb(t, 49_600_000)
	require.Less(t, len(bomb), 200<<10, "a bomb: under 200 KiB on disk for 49.6 MB of lines")

	_, events, err := ReadRecording(bytes.NewReader(bomb))
	require.ErrorIs(t, err, ErrRecordingTooLarge)
	var re *RecordingError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, err.Error(), "more than 16 MiB of JSON lines after gunzip")
	line := len(bombLine)
	assert.Equal(t, 2+(MaxRecordingSize-len(header)-1)/line, re.Line, "the line that goes past the limit: %v", err)
	assert.Len(t, events, re.Line-2, "the events before it are returned, as for any bad line")

	t.Run("a recording at the limit is read, one byte more is refused", func(t *testing.T) {
		// The same reader with a limit of 1000 bytes, not 16 MiB: the edge is the same.
		file := []byte(header + "\n")
		ev := `{"t":0,"stage":"workqueue","kind":"added"}` + "\n"
		file = append(file, strings.Repeat(ev, (1000-len(file))/len(ev))...)
		file = append(file, strings.Repeat(" ", 1000-len(file))...) // a last, blank line
		require.Len(t, file, 1000)
		readAll := func(file []byte) (int, error) {
			rr, err := newRecordingReader(bytes.NewReader(file), 1000)
			require.NoError(t, err)
			for n := 0; ; n++ {
				if _, err := rr.Next(); err != nil {
					return n, err
				}
			}
		}
		n, err := readAll(file)
		assert.Equal(t, io.EOF, err)
		assert.Equal(t, (1000-len(header)-1)/len(ev), n)
		_, err = readAll(append(file, '\n'))
		assert.ErrorIs(t, err, ErrRecordingTooLarge, "one byte more, even a blank line's, is refused")
		assert.ErrorContains(t, err, "more than 1000 bytes of JSON lines after gunzip")
	})

	t.Run("a RecordingReader reads past it, one event at a time", func(t *testing.T) {
		rr, err := NewRecordingReader(bytes.NewReader(bomb))
		require.NoError(t, err)
		for n := 0; n*line <= MaxRecordingSize+line; n++ {
			_, err := rr.Next()
			require.NoError(t, err)
		}
	})
}

// TestTheCommittedRecordingsAreFarBelowTheLimit: every recording in docs/recordings
// reads whole, and the largest is less than a sixteenth of MaxRecordingSize.
func TestTheCommittedRecordingsAreFarBelowTheLimit(t *testing.T) {
	files, err := filepath.Glob("../docs/recordings/*.jsonl.gz")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		f, err := os.Open(file)
		require.NoError(t, err)
		gz, err := gzip.NewReader(f)
		require.NoError(t, err)
		size, err := io.Copy(io.Discard, gz)
		require.NoError(t, err)
		f.Close()
		assert.Less(t, size, int64(MaxRecordingSize/16), "%s: %d bytes of lines", file, size)
		_, _, err = OpenRecording(file)
		assert.NoError(t, err)
	}
}
