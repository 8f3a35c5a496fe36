package main

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/steptest"
)

// The program on both initial lists: a paged LIST (its choice, by name) and the
// watch-list (-watch-list, the zero value). The store sees the same calls either way.
func TestReflectorFeedsTheStore(t *testing.T) {
	cfg, ctx, core := steptest.Cluster(t, "step02")
	t.Run("paged LIST then WATCH", func(t *testing.T) {
		feedsTheStore(t, ctx, cfg, core, "step02", false, "paged LIST then WATCH")
	})
	t.Run("watch-list then WATCH", func(t *testing.T) {
		ns := "step02-watch-list"
		feedsTheStore(t, ctx, cfg, steptest.Core(t, ctx, cfg, ns), ns, true, "watch-list then WATCH")
	})
}

func feedsTheStore(t *testing.T, ctx context.Context, cfg *rest.Config, core rest.Interface, ns string, watchList bool, header string) {
	steptest.ConfigMap(t, ctx, core, ns, "before", "1", false)
	steptest.InWatchCache(t, ctx, core, ns, "before")

	// The program, in a goroutine owned by steptest.Start.
	out, stop := steptest.Start(ctx, func(ctx context.Context, w io.Writer) error {
		return run(ctx, cfg, slog.New(slog.DiscardHandler), w, ns, watchList)
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

	t.Run("the first call is a Replace with everything the list returned", func(t *testing.T) {
		assert.Regexp(t, `^reflector .*: `+header+` configmaps in "`+ns+`"\nReplace  1 items at rv \d+: \[before\]\n`, text)
	})
	t.Run("each watch event becomes one Add, Update or Delete, in order", func(t *testing.T) {
		assert.Regexp(t, `(?s)Add      during rv=\d+\nUpdate   during rv=\d+ data=map\[k:2\]\nDelete   before rv=\d+\n`, text)
	})
	t.Run("at the end the store mirrors the namespace", func(t *testing.T) {
		assert.Regexp(t, `stopped at rv \d+; the store holds 1: \[`+ns+`/during\]\n$`, text)
	})
}
