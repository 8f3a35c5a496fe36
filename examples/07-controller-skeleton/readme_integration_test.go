package main

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/examples/internal/steptest"
)

// TestREADMESample runs the README's commands — the program on the default namespace,
// then create and delete ConfigMap demo — and checks that the README's sample output is
// printed, in order.
func TestREADMESample(t *testing.T) {
	sample := steptest.Sample(t, "README.md", "What the first terminal printed")
	cfg, ctx, core := steptest.DefaultNamespace(t)

	out, stop := steptest.Start(ctx, func(ctx context.Context, w io.Writer) error {
		return run(ctx, cfg, slog.New(slog.DiscardHandler), w, "default", 2)
	})
	out.WaitFor(t, "synced; 2 workers")
	demo := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Data: map[string]string{"a": "1", "b": "2"}}
	require.NoError(t, core.Post().Namespace("default").Resource("configmaps").Body(demo).Do(ctx).Error())
	// Why wait: a delete that lands before a worker gets the key would leave only
	// "gone"; typing the second command gives the worker that time.
	out.WaitFor(t, "reconcile default/demo: rv=")
	steptest.Delete(t, ctx, core, "default", "configmaps", "demo")
	out.WaitFor(t, "reconcile default/demo: gone")
	require.NoError(t, stop())

	steptest.AssertSampleInOrder(t, sample, out.String())
}
