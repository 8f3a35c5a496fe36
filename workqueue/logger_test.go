package workqueue

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWithoutALoggerAStrayDoneIsReportedToSlogDefault(t *testing.T) {
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	q := NewQueue[string](Options{Name: "jobs"})
	q.Done("a")
	assert.Contains(t, buf.String(), "Done for an item that is not processing", "a nil Logger means slog.Default()")
}
