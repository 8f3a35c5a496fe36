package main

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/internal/steptest"
)

// TestREADMESample runs the README's commands — the program on the default namespace,
// then create, label and delete ConfigMap demo — and checks that every line of the
// README's sample output is printed.
func TestREADMESample(t *testing.T) {
	sample := steptest.Sample(t, "README.md", "What the first terminal printed")
	cfg, ctx, core := steptest.DefaultNamespace(t)

	// Resync every second instead of the README's 10s, so that a resync line comes soon.
	out, stop := steptest.Start(ctx, func(ctx context.Context, w io.Writer) error {
		return run(ctx, cfg, slog.New(slog.DiscardHandler), w, "default", time.Second)
	})
	out.WaitFor(t, "replay done for the late handler")
	steptest.ConfigMap(t, ctx, core, "default", "demo", "1", false)
	steptest.MergePatch(t, ctx, core, "default", "configmaps", "demo", `{"metadata":{"labels":{"colour":"green"}}}`)
	steptest.Delete(t, ctx, core, "default", "configmaps", "demo")
	out.WaitFor(t, "early delete demo")
	out.WaitFor(t, "late  delete demo")
	out.WaitFor(t, "early resync kube-root-ca.crt")
	require.NoError(t, stop())

	steptest.AssertSampleAnyOrder(t, sample, out.String())
}
