package trace

import (
	"context"
	"log/slog"
)

// Slog returns a Sink that logs every event as one Debug record on logger, with the
// event's sentence as the message and its non-zero fields as attributes — for people
// who already collect logs. The logger's handler decides whether Debug is kept; the
// Sink checks first, so a handler at Info costs one call per event.
func Slog(logger *slog.Logger) Sink {
	if logger == nil {
		return nil
	}
	return func(e Event) {
		ctx := context.Background()
		if !logger.Enabled(ctx, slog.LevelDebug) {
			return
		}
		attrs := []slog.Attr{
			slog.String("stage", string(e.Stage)),
			slog.String("kind", string(e.Kind)),
		}
		str := func(k, v string) {
			if v != "" {
				attrs = append(attrs, slog.String(k, v))
			}
		}
		num := func(k string, v int) {
			if v != 0 {
				attrs = append(attrs, slog.Int(k, v))
			}
		}
		str("source", e.Source)
		str("key", e.Key)
		str("rv", e.ResourceVersion)
		str("type", e.Type)
		str("reason", e.Reason)
		str("detail", e.Detail)
		num("items", e.Items)
		if e.Paged {
			attrs = append(attrs, slog.Bool("paged", true))
		}
		num("tombstones", e.Tombstones)
		num("pending", e.Pending)
		num("queueLen", e.QueueLen)
		num("listeners", e.Listeners)
		num("skipped", e.Skipped)
		num("backlog", e.Backlog)
		num("requeues", e.Requeues)
		if e.Duration != 0 {
			attrs = append(attrs, slog.Duration("duration", e.Duration))
		}
		r := slog.NewRecord(e.Time, slog.LevelDebug, e.String(), 0)
		r.AddAttrs(attrs...)
		_ = logger.Handler().Handle(ctx, r)
	}
}
