package cluster

import (
	"testing"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

// ForTest starts a local cluster for an integration test, with the proxy, and stops
// both when the test ends. Like testenv.Start it skips the test when the control plane
// is not built, or fails it under KUBEINTERNALS_REQUIRE_CONTROLPLANE=1.
func ForTest(t testing.TB, opts Options) *Cluster {
	t.Helper()
	env := testenv.Start(t, testenv.Options{Profile: testenv.Cluster, APIServerFlags: opts.APIServerFlags})
	proxy, err := testenv.StartProxy(env.Config.Host)
	if err != nil {
		t.Fatalf("starting the proxy: %v", err)
	}
	t.Cleanup(proxy.Close)
	return local(env, proxy)
}
