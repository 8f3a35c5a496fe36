package main

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/internal/steptest"
)

// TestREADMESample runs the README's commands — the program on the default namespace,
// then create, patch and delete ConfigMap demo — and checks that the README's sample
// output is printed, in order.
func TestREADMESample(t *testing.T) {
	sample := steptest.Sample(t, "README.md", "What the first terminal printed")
	cfg, ctx, core := steptest.DefaultNamespace(t)

	out, stop := steptest.Start(ctx, func(ctx context.Context, w io.Writer) error {
		return run(ctx, cfg, slog.New(slog.DiscardHandler), w, "default", false)
	})
	out.WaitFor(t, "Replace ")
	steptest.ConfigMap(t, ctx, core, "default", "demo", "1", false)
	steptest.MergePatch(t, ctx, core, "default", "configmaps", "demo", `{"data":{"k":"2"}}`)
	steptest.Delete(t, ctx, core, "default", "configmaps", "demo")
	out.WaitFor(t, "Delete   demo")
	require.NoError(t, stop())

	steptest.AssertSampleInOrder(t, sample, out.String())
}
