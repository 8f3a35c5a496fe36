package main

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/internal/steptest"
)

func TestDeltaFIFOKeepsEachObjectsChangesTogether(t *testing.T) {
	const ns = "step03"
	cfg, ctx, core := steptest.Cluster(t, ns)
	steptest.ConfigMap(t, ctx, core, ns, "before", "1", false)
	steptest.InWatchCache(t, ctx, core, ns, "before")

	// The program, in a goroutine owned by steptest.Start.
	out, stop := steptest.Start(ctx, func(ctx context.Context, w io.Writer) error {
		return run(ctx, cfg, slog.New(slog.DiscardHandler), w, ns, 300*time.Millisecond)
	})

	out.WaitFor(t, "Pop before: [Replaced(")
	// Three changes to one object in quick succession, and a delete of another.
	steptest.ConfigMap(t, ctx, core, ns, "during", "1", false)
	steptest.ConfigMap(t, ctx, core, ns, "during", "2", true)
	steptest.ConfigMap(t, ctx, core, ns, "during", "3", true)
	steptest.Delete(t, ctx, core, ns, "configmaps", "before")
	out.WaitFor(t, "Pop before: [Deleted(")
	require.NoError(t, stop())
	text := out.String()
	t.Logf("program output:\n%s", text)

	t.Run("by hand: four changes to two objects come out as two entries, each object's changes in order", func(t *testing.T) {
		assert.Contains(t, text, "part 1: Add a, Add b, Update a, Delete a\n"+
			"  Pop a: [Added(rv=1) Updated(rv=3) Deleted(rv=4)] initial=false\n"+
			"  Pop b: [Added(rv=2)] initial=false\n")
	})
	t.Run("the initial LIST arrives as Replaced deltas, flagged as the initial list", func(t *testing.T) {
		assert.Regexp(t, `  Pop before: \[Replaced\(rv=\d+\)\] initial=true\n`, text)
	})
	t.Run("watch events arrive as Added, Updated and Deleted, no longer initial", func(t *testing.T) {
		assert.Regexp(t, `  Pop during: \[Added\(rv=\d+\)[^\n]*\] initial=false\n`, text)
		assert.Regexp(t, `Updated\(rv=\d+\)`, text)
		assert.Regexp(t, `  Pop before: \[Deleted\(rv=\d+\)\] initial=false\n`, text)
	})
	t.Run("the cache the pops were applied to holds what is left", func(t *testing.T) {
		assert.Contains(t, text, "stopped; the cache holds 1 objects\n")
	})
}
