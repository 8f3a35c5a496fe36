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

func TestControllerSkeletonReconcilesEachChange(t *testing.T) {
	const ns = "step07"
	cfg, ctx, core := steptest.Cluster(t, ns)
	steptest.ConfigMap(t, ctx, core, ns, "before", "1", false)

	// The program, in a goroutine owned by steptest.Start.
	out, stop := steptest.Start(ctx, func(ctx context.Context, w io.Writer) error {
		return run(ctx, cfg, slog.New(slog.DiscardHandler), w, ns, 2)
	})

	out.WaitFor(t, "reconcile step07/before: rv=")
	steptest.ConfigMap(t, ctx, core, ns, "during", "1", false)
	out.WaitFor(t, "reconcile step07/during: rv=")
	steptest.Delete(t, ctx, core, ns, "configmaps", "during")
	out.WaitFor(t, "reconcile step07/during: gone")
	require.NoError(t, stop())
	text := out.String()
	t.Logf("program output:\n%s", text)

	t.Run("an object that existed before start is reconciled from the initial list", func(t *testing.T) {
		assert.Regexp(t, `^synced; 2 workers\n(.*\n)*reconcile step07/before: rv=\d+ keys=\[k\]\n`, text)
	})
	t.Run("a deleted object is reconciled by key and found gone from the cache", func(t *testing.T) {
		assert.Contains(t, text, "reconcile step07/during: gone\n")
	})
	t.Run("on stop the workers finish and the program returns", func(t *testing.T) {
		assert.Regexp(t, `workers stopped\n$`, text)
	})
}
