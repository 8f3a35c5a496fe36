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

// TestREADMESample runs the README's commands — the program on the default namespace
// popping every 3s, then create, label twice and delete ConfigMap burst between two
// pops — and checks that the README's sample output is printed, in order.
func TestREADMESample(t *testing.T) {
	sample := steptest.Sample(t, "README.md", "What the first terminal printed")
	cfg, ctx, core := steptest.DefaultNamespace(t)

	out, stop := steptest.Start(ctx, func(ctx context.Context, w io.Writer) error {
		return run(ctx, cfg, slog.New(slog.DiscardHandler), w, "default", 3*time.Second)
	})
	// Why wait for this pop: the next comes 3s later, and the four writes take
	// milliseconds, so all four land in one entry, as in the README.
	out.WaitFor(t, "Pop kube-root-ca.crt")
	steptest.ConfigMap(t, ctx, core, "default", "burst", "1", false)
	for _, label := range []string{`{"a":"1"}`, `{"b":"2"}`} {
		steptest.MergePatch(t, ctx, core, "default", "configmaps", "burst", `{"metadata":{"labels":`+label+`}}`)
	}
	steptest.Delete(t, ctx, core, "default", "configmaps", "burst")
	out.WaitFor(t, "Pop burst")
	require.NoError(t, stop())

	steptest.AssertSampleInOrder(t, sample, out.String())
}
