package trace

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// CaptureLogs returns a slog.Handler that hands every record to next, exactly as
// next alone would (nil: to nobody), and reports each record at level or above
// (nil: slog.LevelInfo) to sink as a Logged event of stage Log: Source is source
// (the program, "lab" or "foo-controller"), Type the level, Detail the message,
// Attrs the attributes as slog's TextHandler writes them — those the logger was
// built With included, a group's as dotted keys (`informer=foos err="…"`).
//
// It is how a recording keeps the log lines of its run: give the program's logger
// this handler with a sink that records (a RecordingWriter's Record, a Recorder's),
// and a replay shows each line at the moment it was written, among the events that
// explain it. Trace events and log lines go the other way in Slog.
//
// The sink is called on the logging goroutine, under a lock this handler and the
// handlers derived from it (WithAttrs, WithGroup) share while it renders the
// attributes: a program that logs a line per event pays for it there.
func CaptureLogs(next slog.Handler, source string, level slog.Leveler, sink Sink) slog.Handler {
	if level == nil {
		level = slog.LevelInfo
	}
	s := &captured{source: source, level: level, sink: sink}
	return &captureHandler{captured: s, next: next, text: slog.NewTextHandler(&s.buf, &slog.HandlerOptions{
		Level: slog.LevelDebug - 100, // Why: Handle is only called for what Enabled let through.
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			// The time, level and message have fields of their own in the event.
			if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey) {
				return slog.Attr{}
			}
			return a
		},
	})}
}

// captured is what a CaptureLogs handler and the handlers derived from it share.
type captured struct {
	source string
	level  slog.Leveler
	sink   Sink

	mu  sync.Mutex
	buf bytes.Buffer // guarded by mu: the text handlers render into it
}

// captureHandler is one handler of the family: next and text carry the same
// WithAttrs and WithGroup calls.
type captureHandler struct {
	*captured
	next slog.Handler // nil: the records are only captured
	text slog.Handler // renders a record's attributes into buf
}

// Enabled is true for what is captured and for what next handles.
func (h *captureHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.level.Level() || (h.next != nil && h.next.Enabled(ctx, l))
}

// Handle hands r to next if next takes its level, and captures it if its level is
// captured. next's error is returned; capturing cannot fail.
func (h *captureHandler) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if h.next != nil && h.next.Enabled(ctx, r.Level) {
		err = h.next.Handle(ctx, r)
	}
	if r.Level < h.level.Level() || h.sink == nil {
		return err
	}
	at := r.Time
	if at.IsZero() {
		at = time.Now()
	}
	h.sink(Event{Time: at, Stage: Log, Kind: Logged, Source: h.source, Type: r.Level.String(), Detail: r.Message, Attrs: h.attrs(ctx, r)})
	return err
}

// attrs renders r's attributes, and the handler's own, as one line of text.
func (h *captureHandler) attrs(ctx context.Context, r slog.Record) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.buf.Reset()
	if err := h.text.Handle(ctx, r); err != nil { // writes to a bytes.Buffer: cannot fail
		return "!rendering the attributes failed: " + err.Error()
	}
	return strings.TrimSuffix(h.buf.String(), "\n")
}

func (h *captureHandler) WithAttrs(as []slog.Attr) slog.Handler {
	if len(as) == 0 {
		return h
	}
	c := &captureHandler{captured: h.captured, text: h.text.WithAttrs(as)}
	if h.next != nil {
		c.next = h.next.WithAttrs(as)
	}
	return c
}

func (h *captureHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := &captureHandler{captured: h.captured, text: h.text.WithGroup(name)}
	if h.next != nil {
		c.next = h.next.WithGroup(name)
	}
	return c
}
