package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/internal/steptest"
)

func TestTwoHandlersShareOneInformer(t *testing.T) {
	const ns = "step05"
	cfg, ctx, core := steptest.Cluster(t, ns)
	steptest.ConfigMap(t, ctx, core, ns, "before", "1", false)
	steptest.InWatchCache(t, ctx, core, ns, "before")

	// The program, with its early handler resyncing every 1s.
	out, stop := steptest.Start(ctx, func(ctx context.Context, w io.Writer) error {
		return run(ctx, cfg, slog.New(slog.DiscardHandler), w, ns, time.Second)
	})

	out.WaitFor(t, "replay done for the late handler")
	steptest.ConfigMap(t, ctx, core, ns, "during", "1", false)
	steptest.ConfigMap(t, ctx, core, ns, "during", "2", true)
	steptest.Delete(t, ctx, core, ns, "configmaps", "during")
	out.WaitFor(t, "early delete during")
	out.WaitFor(t, "late  delete during")
	out.WaitFor(t, "early resync before")
	require.NoError(t, stop())
	text := out.String()
	t.Logf("program output:\n%s", text)
	lines := strings.Split(text, "\n")
	linesOf := func(prefix string) []string {
		var got []string
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) && !strings.Contains(l, " resync ") {
				got = append(got, strings.Join(strings.Fields(l)[1:3], " ")) // "add before", …
			}
		}
		return got
	}

	t.Run("the early handler gets the initial list as adds flagged initial", func(t *testing.T) {
		assert.Regexp(t, `early add    before rv=\d+ initial=true`, text)
	})
	t.Run("the late handler gets the cache replayed as adds flagged initial", func(t *testing.T) {
		assert.Regexp(t, `late  add    before rv=\d+ initial=true`, text)
	})
	t.Run("both handlers see the same live changes in the same order, none flagged initial", func(t *testing.T) {
		want := []string{"add before", "add during", "update during", "delete during"}
		assert.Equal(t, want, linesOf("early"))
		assert.Equal(t, want, linesOf("late "))
		assert.Regexp(t, `early add    during rv=\d+ initial=false`, text)
		assert.Regexp(t, `early delete during rv=\d+ inferred=false`, text)
	})
	t.Run("a resync reaches only the handler that asked for one, with old and new at the same RV", func(t *testing.T) {
		assert.Regexp(t, `early resync before rv=(\d+)→\d+`, text)
		assert.NotContains(t, text, "late  resync")
	})
}
