package controller_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/examples/internal/steptest"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
	"github.com/kubeinternals/informers/leaderelection"
)

func TestAReplicaThatLosesItsLeaseStopsItsWorkersAtOnceAndRunFails(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c := newCluster(t, ctx, env.Config)
	ns := c.namespace(t, ctx, "lose-the-lease")

	logs := &steptest.Buffer{}
	ctl, err := controller.New(env.Config, controller.Options{
		ResyncPeriod: -1, Logger: slog.New(slog.NewTextHandler(io.MultiWriter(t.Output(), logs), nil)),
		LeaderElection: &controller.LeaderElection{
			Namespace: ns, Identity: "replica-a",
			LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond,
		},
	})
	require.NoError(t, err)
	runErr := make(chan error, 1)
	go func() { runErr <- ctl.Run(ctx) }()
	require.Eventually(t, ctl.Leading, time.Minute, 10*time.Millisecond, "alone, it leads")
	assert.True(t, ctl.Ready())
	require.NoError(t, ctl.Healthy())

	// Someone else writes the Lease (a replica that believes the lease expired, an
	// operator): replica-a's next renewal conflicts, and its reads show another holder.
	leases, err := newLeaseClient(env)
	require.NoError(t, err)
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		lease := &coordinationv1.Lease{}
		require.NoError(ct, leases.Get().Namespace(ns).Resource("leases").Name(controller.Name).Do(ctx).Into(lease))
		now := metav1.NowMicro()
		lease.Spec.HolderIdentity, lease.Spec.RenewTime, lease.Spec.LeaseDurationSeconds = ptr.To("intruder"), &now, ptr.To[int32](3600)
		require.NoError(ct, leases.Put().Namespace(ns).Resource("leases").Name(controller.Name).Body(lease).Do(ctx).Error())
	}, 10*time.Second, 50*time.Millisecond)
	written := time.Now()

	select {
	case err := <-runErr:
		assert.ErrorIs(t, err, leaderelection.ErrLeaseLost)
		lost := time.Since(written)
		t.Logf("Run returned %v after the intruder's write", lost.Round(time.Millisecond))
		assert.Less(t, lost, 500*time.Millisecond+time.Second,
			"R5: at the first renewal after the write (within a retry period, 0.5s, plus 1s for the requests), not a renew deadline later")
	case <-time.After(30 * time.Second):
		t.Fatal("Run still running 30s after the lease was taken")
	}
	assert.False(t, ctl.Leading(), "the workers stopped")
	assert.Contains(t, logs.String(), "leadership lost: stopping workers at once")
	assert.NotContains(t, logs.String(), "letting workers finish", "no drain: another replica may already work")
	assert.False(t, ctl.Ready())
}

func newLeaseClient(env *testenv.Env) (*rest.RESTClient, error) {
	rc, _, err := kube.NewRESTClient(env.Config, coordinationv1.SchemeGroupVersion, nil, coordinationv1.AddToScheme)
	return rc, err
}
