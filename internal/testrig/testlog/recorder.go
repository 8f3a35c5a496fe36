// Package testlog is a slog.Handler for tests that check what was logged.
package testlog

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// Recorder is a slog.Handler that keeps every record's level and message, with its
// attributes as key=value. Its zero value is ready; it is safe for concurrent use.
type Recorder struct {
	mu    sync.Mutex
	lines []string // guarded by mu
}

// Enabled records every level.
func (h *Recorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle keeps r as one line: "LEVEL message key=value …".
func (h *Recorder) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, b.String())
	return nil
}

// WithAttrs returns h: attributes added by a With logger are not kept.
func (h *Recorder) WithAttrs([]slog.Attr) slog.Handler { return h }

// WithGroup returns h: groups are not kept.
func (h *Recorder) WithGroup(string) slog.Handler { return h }

// Lines returns the records whose text contains substr.
func (h *Recorder) Lines(substr string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, l := range h.lines {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return out
}
