package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/trace"
)

func TestListenLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		t.Run(addr+" is accepted", func(t *testing.T) {
			ln, err := listenLoopback(addr)
			require.NoError(t, err)
			assert.Contains(t, ln.Addr().String(), "127.0.0.1:")
			ln.Close()
		})
	}
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:8077", "example.com:8077", "nonsense"} {
		t.Run(addr+" is refused", func(t *testing.T) {
			_, err := listenLoopback(addr)
			require.Error(t, err)
			assert.Contains(t, err.Error(), addr)
		})
	}
}

// writeCutRecording writes a gzipped recording of n events to a file, as a process
// killed after its last flush leaves it: no gzip trailer. Its header and events are
// lines 1 to n+1.
func writeCutRecording(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	rw, err := trace.CreateRecording(filepath.Join(dir, "whole.jsonl.gz"), trace.RecordingHeader{Start: t0, Program: "foo-controller", Run: "killed"})
	require.NoError(t, err)
	for i := range n {
		rw.Record(at(10*i, trace.Event{Stage: trace.Workqueue, Kind: trace.Added, Source: "foos", Key: fmt.Sprintf("default/foo-%d", i)}))
	}
	require.NoError(t, rw.Flush())
	b, err := os.ReadFile(filepath.Join(dir, "whole.jsonl.gz"))
	require.NoError(t, err)
	require.NoError(t, rw.Close())
	cut := filepath.Join(dir, "cut.jsonl.gz")
	require.NoError(t, os.WriteFile(cut, b, 0o644))
	return cut
}

func TestACutRecordingReplaysUpToTheCutAndSaysWhere(t *testing.T) {
	file := writeCutRecording(t, 5)
	var logged bytes.Buffer
	ln, err := listenLoopback("127.0.0.1:0")
	require.NoError(t, err)
	x, err := startReplay(t.Context(), file, ln, slog.New(slog.NewTextHandler(&logged, nil)))
	require.NoError(t, err, "a recording cut by a crash replays")
	defer func() { assert.NoError(t, x.Stop()) }()

	s := x.state(t)
	require.NotNil(t, s.Replay)
	assert.Equal(t, 5, s.Replay.Total, "every event before the cut")
	const note = "recording cut at line 7: the gzip stream ends before its trailer (unexpected EOF), after 6 whole lines. The 5 events before the cut are replayed."
	assert.Equal(t, note, s.Replay.Cut, "the player's state says where")
	assert.Contains(t, logged.String(), `level=WARN msg="the recording is cut short: replaying the events before the cut"`)
	assert.Contains(t, logged.String(), "events=5", "the log says how many events are replayed")
	assert.Contains(t, logged.String(), "line 7: cut short", "and where the cut is")

	code, page := do(t, mustGet(t, x.URL))
	require.Equal(t, 200, code)
	assert.Contains(t, page, `<p id="replay-cut" class="warn">✂ `+note+`</p>`, "the page says it above the timeline")
}

func TestAWholeRecordingSaysNothingOfACut(t *testing.T) {
	ln, err := listenLoopback("127.0.0.1:0")
	require.NoError(t, err)
	var logged bytes.Buffer
	x, err := startReplay(t.Context(), "../../docs/recordings/watch-cut.jsonl.gz", ln, slog.New(slog.NewTextHandler(&logged, nil)))
	require.NoError(t, err)
	defer func() { assert.NoError(t, x.Stop()) }()
	assert.Empty(t, x.state(t).Replay.Cut)
	assert.NotContains(t, logged.String(), "cut short")
	_, page := do(t, mustGet(t, x.URL))
	assert.NotContains(t, page, "replay-cut")
}

func TestABadLineInARecordingStopsTheReplayNamingIt(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(`{"format":"kubeinternals-trace","version":1,"start":"2026-11-23T12:00:00Z"}
{"t":1,"stage":"workqueue","kind":"added","key":"a"}
{"t":2,"stage":"workqueue"
{"t":3,"stage":"workqueue","kind":"added","key":"b"}
`), 0o644))
	ln, err := listenLoopback("127.0.0.1:0")
	require.NoError(t, err)
	_, err = startReplay(t.Context(), file, ln, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.Error(t, err)
	assert.Equal(t, file+": trace recording, line 3: unexpected EOF", err.Error())
	assert.NotErrorIs(t, err, trace.ErrRecordingCut)
}

func TestARecordingCutBeforeItsFirstEventHasNothingToReplay(t *testing.T) {
	file := writeCutRecording(t, 0)
	ln, err := listenLoopback("127.0.0.1:0")
	require.NoError(t, err)
	_, err = startReplay(t.Context(), file, ln, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.ErrorIs(t, err, trace.ErrRecordingCut)
	assert.Contains(t, err.Error(), "line 2")
}
