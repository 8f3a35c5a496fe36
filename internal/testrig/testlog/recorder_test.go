package testlog

import (
	"log/slog"
	"testing"
)

func TestLinesKeepsLevelMessageAndAttributes(t *testing.T) {
	h := &Recorder{}
	log := slog.New(h)
	log.Warn("skipping watch event", "key", "ns/a")
	log.Info("other")
	got := h.Lines("skipping")
	if len(got) != 1 || got[0] != "WARN skipping watch event key=ns/a" {
		t.Fatalf("Lines(skipping) = %q", got)
	}
	if got := h.Lines("nothing like it"); len(got) != 0 {
		t.Fatalf("Lines(nothing like it) = %q", got)
	}
}
