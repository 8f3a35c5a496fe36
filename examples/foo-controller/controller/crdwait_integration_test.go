package controller_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/foo-controller/artifacts"
	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/examples/internal/crd"
	"github.com/kubeinternals/informers/examples/internal/steptest"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

// sample-controller's README starts the controller, then installs the CRD. Started in
// that order, this controller waits — saying why every 5 s — and starts its workers once
// the CRD is served.
func TestFooControllerStartedBeforeItsCRDWaitsForIt(t *testing.T) {
	// Its own apiserver: the CRD must be missing, and CRDs are cluster-wide.
	env := testenv.Start(t, testenv.Options{Profile: testenv.APIServer})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	var logs steptest.Buffer
	ctl, err := controller.New(env.Config, controller.Options{ResyncPeriod: -1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	runCtx, stopRun := context.WithCancel(ctx)
	done := make(chan error, 1)
	// Goroutine owned by this test: runs the controller until stopRun.
	go func() { done <- ctl.Run(runCtx) }()

	// The first report comes 5 s into the wait and names the missing API.
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "is the Foo CRD installed?") }, 30*time.Second, 50*time.Millisecond,
		"a report of the 404:\n%s", &logs)
	select {
	case err := <-done:
		t.Fatalf("Run returned while the CRD was missing: %v\n%s", err, &logs)
	default:
	}
	assert.Contains(t, logs.String(), "foos.samplecontroller.k8s.io", "the report names the informer")
	assert.NotContains(t, logs.String(), "starting workers")

	_, err = crd.InstallCRD(ctx, env.Config, artifacts.CRD(), crd.Options{})
	require.NoError(t, err)
	installed := time.Now()
	logs.WaitFor(t, "starting workers")
	t.Logf("workers started %s after the CRD was Established", time.Since(installed).Round(time.Millisecond))

	c := newCluster(t, ctx, env.Config)
	ns := c.namespace(t, ctx, "late-crd")
	c.createFoo(t, ctx, ns, "example-foo", "example-foo", 1)
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		_, err := c.deployment(ctx, ns, "example-foo")
		require.NoError(ct, err)
	}, waitFor, tick)

	stopRun()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("Run did not return within 60s of ctx ending")
	}
}
