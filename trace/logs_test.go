package trace

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withoutTimes drops the time=… field a TextHandler starts each line with.
func withoutTimes(s string) string {
	return regexp.MustCompile(`(?m)^time=\S+ `).ReplaceAllString(s, "")
}

// logAll logs the same lines through a logger on h: a With, a group, every level.
func logAll(h slog.Handler) {
	log := slog.New(h).With("informer", "foos")
	log.Debug("not captured", "n", 1)
	log.Info("synced", "items", 3)
	log.WithGroup("watch").Warn("watch ended", "reason", "410 Gone", "rv", "812")
	log.Log(context.Background(), slog.LevelWarn+2, "between", "err", errors.New("x y"))
	log.Error("handler panicked", slog.Group("handler", "name", "slow"))
}

func TestCapturedLogsAreTheRecordsNextPrintsAsEvents(t *testing.T) {
	var alone, next bytes.Buffer
	logAll(slog.NewTextHandler(&alone, nil))
	rec := &Recorder{}
	logAll(CaptureLogs(slog.NewTextHandler(&next, nil), "lab", nil, rec.Record))

	assert.Equal(t, withoutTimes(alone.String()), withoutTimes(next.String()), "next prints what it prints alone")
	var got []string
	for _, e := range rec.Events() {
		assert.Equal(t, Log, e.Stage)
		assert.Equal(t, Logged, e.Kind)
		assert.Equal(t, "lab", e.Source)
		assert.False(t, e.Time.IsZero(), "the record's time")
		got = append(got, e.Type+" | "+e.Detail+" | "+e.Attrs)
	}
	assert.Equal(t, []string{
		"INFO | synced | informer=foos items=3",
		"WARN | watch ended | informer=foos watch.reason=\"410 Gone\" watch.rv=812",
		"WARN+2 | between | informer=foos err=\"x y\"",
		"ERROR | handler panicked | informer=foos handler.name=slow",
	}, got, "from Info up (the default level), the attributes as the text handler writes them")
	assert.Equal(t, `logged WARN: watch ended informer=foos watch.reason="410 Gone" watch.rv=812`, rec.Events()[1].String())
}

func TestCaptureLogsLevelsAndNoNext(t *testing.T) {
	rec := &Recorder{}
	h := CaptureLogs(nil, "demo", slog.LevelDebug, rec.Record)
	assert.True(t, h.Enabled(context.Background(), slog.LevelDebug), "Debug is captured at LevelDebug")
	logAll(h)
	require.Len(t, rec.Events(), 5, "every record, Debug included; no next to hand them to")
	assert.Equal(t, "DEBUG | not captured | informer=foos n=1", rec.Events()[0].Type+" | "+rec.Events()[0].Detail+" | "+rec.Events()[0].Attrs)

	rec = &Recorder{}
	var out bytes.Buffer
	h = CaptureLogs(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}), "demo", slog.LevelError, rec.Record)
	logAll(h)
	assert.Len(t, rec.Events(), 1, "only the Error is captured")
	assert.Equal(t, 5, strings.Count(out.String(), "\n"), "next prints all five, Debug included")
	assert.False(t, CaptureLogs(nil, "demo", slog.LevelError, rec.Record).Enabled(context.Background(), slog.LevelWarn),
		"a level neither captured nor printed is not enabled: the logger skips building the record")
}

func TestALogLineSurvivesARecording(t *testing.T) {
	rec := &Recorder{}
	slog.New(CaptureLogs(nil, "foo-controller", nil, rec.Record)).Warn("falling behind", "handler", "slow", "backlog", 1000)
	var b bytes.Buffer
	require.NoError(t, WriteRecording(&b, RecordingHeader{}, rec.Events()))
	assert.Contains(t, b.String(), `"stage":"log","kind":"logged","source":"foo-controller","type":"WARN","detail":"falling behind","attrs":"handler=slow backlog=1000"}`)
	h, got, err := ReadRecording(&b)
	require.NoError(t, err)
	assert.Equal(t, 2, h.Version)
	require.Len(t, got, 1)
	assert.Equal(t, "handler=slow backlog=1000", got[0].Attrs)
}
