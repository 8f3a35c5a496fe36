package kube

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// ErrBadLogFlag is returned (wrapped) for an unknown log level or format.
var ErrBadLogFlag = errors.New("bad logging flag")

// NewLogger returns a slog logger writing to w at the given level ("debug", "info",
// "warn", "error"; "" means info) in the given format ("text" or "json"; "" means text).
//
// Why slog and not klog: the packages of this module take an optional *slog.Logger; the
// examples hand them this one. client-go's own rest package still logs through klog.
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lvl slog.Level
	switch strings.ToLower(level) {
	case "debug":
		lvl = slog.LevelDebug
	case "", "info":
		lvl = slog.LevelInfo
	case "warn", "warning":
		lvl = slog.LevelWarn
	case "error":
		lvl = slog.LevelError
	default:
		return nil, fmt.Errorf("%w: log level %q (want debug, info, warn or error)", ErrBadLogFlag, level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(format) {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	default:
		return nil, fmt.Errorf("%w: log format %q (want text or json)", ErrBadLogFlag, format)
	}
}
