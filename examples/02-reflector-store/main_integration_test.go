package main

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/internal/steptest"
)

func TestReflectorFeedsTheStore(t *testing.T) {
	const ns = "step02"
	cfg, ctx, core := steptest.Cluster(t, ns)
	steptest.ConfigMap(t, ctx, core, ns, "before", "1", false)
	steptest.InWatchCache(t, ctx, core, ns, "before")

	// The program, in a goroutine owned by steptest.Start.
	out, stop := steptest.Start(ctx, func(ctx context.Context, w io.Writer) error {
		return run(ctx, cfg, slog.New(slog.DiscardHandler), w, ns)
	})

	out.WaitFor(t, "Replace ")
	steptest.ConfigMap(t, ctx, core, ns, "during", "1", false)
	out.WaitFor(t, "Add      during")
	steptest.ConfigMap(t, ctx, core, ns, "during", "2", true)
	out.WaitFor(t, "Update   during")
	steptest.Delete(t, ctx, core, ns, "configmaps", "before")
	out.WaitFor(t, "Delete   before")
	require.NoError(t, stop())
	text := out.String()
	t.Logf("program output:\n%s", text)

	t.Run("the first call is a Replace with everything the LIST returned", func(t *testing.T) {
		assert.Regexp(t, `^reflector .*\nReplace  1 items at rv \d+: \[before\]\n`, text)
	})
	t.Run("each watch event becomes one Add, Update or Delete, in order", func(t *testing.T) {
		assert.Regexp(t, `(?s)Add      during rv=\d+\nUpdate   during rv=\d+ data=map\[k:2\]\nDelete   before rv=\d+\n`, text)
	})
	t.Run("at the end the store mirrors the namespace", func(t *testing.T) {
		assert.Regexp(t, `stopped at rv \d+; the store holds 1: \[step02/during\]\n$`, text)
	})
}
