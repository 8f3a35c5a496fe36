package main

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/examples/internal/steptest"
)

func TestPodsByNodeIndex(t *testing.T) {
	const ns = "step04"
	cfg, ctx, core := steptest.Cluster(t, ns)
	pod := func(name, node string) {
		// Why a pod can name a node that does not exist: binding is just a field; with
		// no kubelet there, it simply never runs (this API server has no scheduler).
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		require.NoError(t, core.Post().Namespace(ns).Resource("pods").Body(p).Do(ctx).Error())
	}
	pod("web-1", "node-a")
	pod("web-2", "node-a")
	pod("db-1", "node-b")
	pod("pending", "")

	// The program, in a goroutine owned by steptest.Start.
	out, stop := steptest.Start(ctx, func(ctx context.Context, w io.Writer) error {
		return run(ctx, cfg, slog.New(slog.DiscardHandler), w, ns, 100*time.Millisecond)
	})

	out.WaitFor(t, "index at rv")
	pod("db-2", "node-b")
	// Pitfall: a pod bound to a node is deleted gracefully — the kubelet confirms — so
	// without a kubelet it would linger with a deletionTimestamp. Grace 0 removes it now.
	require.NoError(t, core.Delete().Namespace(ns).Resource("pods").Name("web-1").
		Body(&metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}).Do(ctx).Error())
	out.WaitFor(t, "node-a: [step04/web-2]\n  node-b: [step04/db-1 step04/db-2]")
	require.NoError(t, stop())
	text := out.String()
	t.Logf("program output:\n%s", text)

	t.Run("after the first LIST, each node lists its pods; the unscheduled pod is in the store but under no node", func(t *testing.T) {
		assert.Regexp(t, `^index at rv \d+: 4 pods, 2 nodes\n  node-a: \[step04/web-1 step04/web-2\]\n  node-b: \[step04/db-1\]\n`, text)
	})
	t.Run("watch events refile pods: a new pod joins its node, a deleted one leaves", func(t *testing.T) {
		assert.Contains(t, text, "final: 4 pods, 2 nodes\n  node-a: [step04/web-2]\n  node-b: [step04/db-1 step04/db-2]\n")
	})
}
