package controlplanebuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// makeTarget runs `make target` in the repository with the fake go first on PATH, a
// fresh cache root, and env added to an environment without KUBECONFIG or
// KUBEINTERNALS_CONTROLPLANE_BIN. It returns make's stderr, the `go run` lines the
// fake go saw, and the cache root.
func makeTarget(t *testing.T, target string, env ...string) (stderr string, runs []string, root string) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "go"), []byte(fakeGo), 0o755))
	root = filepath.Join(t.TempDir(), "cache")
	runLog := filepath.Join(t.TempDir(), "runs")
	repo, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)

	cmd := exec.Command("make", "--no-print-directory", "-C", repo, target)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "KUBEINTERNALS_CONTROLPLANE_BIN=") &&
			!strings.HasPrefix(kv, "MAKEFLAGS=") && !strings.HasPrefix(kv, "MFLAGS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PATH="+bin+":"+os.Getenv("PATH"), "KUBEINTERNALS_CACHE="+root, "FAKE_GO_RUNS="+runLog)
	cmd.Env = append(cmd.Env, env...)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	require.NoError(t, cmd.Run(), "make %s: %s", target, errOut.String())
	data, err := os.ReadFile(runLog)
	require.NoError(t, err, "make %s never ran `go run`", target)
	return errOut.String(), strings.Split(strings.TrimSpace(string(data)), "\n"), root
}

// A kind user's first `make demo` (lab, explore) must not build the local control
// plane it will not use: with $KUBECONFIG set, the cache stays empty and the example
// runs at once, after a line saying which cluster it uses. Without $KUBECONFIG, the
// control plane is built first and the example is told where.
func TestTheExampleTargetsBuildTheControlPlaneOnlyForTheEmbeddedCluster(t *testing.T) {
	for _, target := range []string{"demo", "lab", "explore"} {
		t.Run("make "+target+" on $KUBECONFIG builds nothing", func(t *testing.T) {
			kubeconfig := filepath.Join(t.TempDir(), "kind-config")
			stderr, runs, root := makeTarget(t, target, "KUBECONFIG="+kubeconfig)
			require.Len(t, runs, 1)
			assert.Contains(t, runs[0], "run ./examples/"+target)
			assert.True(t, strings.HasSuffix(runs[0], " bin="), "no control plane is handed to the example: %q", runs[0])
			assert.NoDirExists(t, root, "nothing was built into the cache")
			assert.Contains(t, stderr, "using the cluster in $KUBECONFIG ("+kubeconfig+")")
			assert.NotContains(t, stderr, "building the control plane")
		})
		t.Run("make "+target+" without $KUBECONFIG builds, then runs on the embedded cluster", func(t *testing.T) {
			stderr, runs, root := makeTarget(t, target)
			require.Len(t, runs, 1)
			assert.Contains(t, runs[0], "run ./examples/"+target)
			dirs, err := filepath.Glob(filepath.Join(root, "controlplane-*"))
			require.NoError(t, err)
			require.Len(t, dirs, 1, "the control plane was built into the cache")
			assert.True(t, strings.HasSuffix(runs[0], " bin="+dirs[0]), "the example is told where it is: %q", runs[0])
			announced := strings.Index(stderr, "using the embedded local control plane")
			building := strings.Index(stderr, "building the control plane")
			require.GreaterOrEqual(t, announced, 0, stderr)
			assert.Less(t, announced, building, "the cluster is named before the build starts: %s", stderr)
		})
	}
}
