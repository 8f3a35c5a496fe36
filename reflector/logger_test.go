package reflector

import (
	"log/slog"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/internal/testrig/testlog"
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

// A relist forced by 410 Gone is logged at Info, which a default logger shows: a relist
// storm (every watch expiring) is visible without metrics. Each path that relists
// after a 410 logs once.
func TestARelistAfter410GoneIsLoggedAtInfo(t *testing.T) {
	for _, c := range []struct {
		name, msg   string
		initialList InitialList
		steps       []step
	}{
		{"a watch that ends with 410 relists", "watch ended with 410 Gone (resource version expired); relisting", PagedList,
			[]step{listStep("10"), watchClose(0, errorEvent(errExpired())), listStep("12"), watchHold()}},
		{"a LIST that gets 410 lists again at the most recent", "list got 410 Gone or a too-large resource version; listing again at the most recent", PagedList,
			[]step{listErr(errExpired()), listStep("12"), watchHold()}},
		{"a watch-list refused with 410 starts again at the most recent", "watch-list got 410 Gone or a too-large resource version; starting again at the most recent", WatchList,
			[]step{watchErr(errExpired()), watchHold(added(cm("a", "11")), bookmarked(initialEventsEnd("12")))}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				logs := &testlog.Recorder{}
				lw := newScriptedLW(t, c.steps...)
				r, err := NewReflector(lw, &recordingStore{}, Options[cmT]{InitialList: c.initialList, Logger: slog.New(logs)})
				require.NoError(t, err)
				runUntilExhausted(t, r, lw)
				assert.Len(t, logs.Lines("INFO "+c.msg), 1, "%q", logs.Lines(""))
			})
		})
	}
}
