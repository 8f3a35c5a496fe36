package reflector

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/internal/testlog"
)

func TestWithoutALoggerListWatchFailuresGoToSlogDefault(t *testing.T) {
	logs := &testlog.Recorder{}
	prev := slog.Default()
	slog.SetDefault(slog.New(logs))
	t.Cleanup(func() { slog.SetDefault(prev) })

	r, err := NewReflector(newScriptedLW(t), &recordingStore{}, Options[cmT]{InitialList: PagedList})
	require.NoError(t, err)
	DefaultWatchErrorHandler(t.Context(), r, errInternal())
	assert.Len(t, logs.Lines("WARN list/watch failed"), 1, "a nil Logger means slog.Default()")
}
