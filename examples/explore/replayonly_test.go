package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheReplayOnlyBuildCompilesNoKubernetesClient builds the explorer the way make
// replay runs it (-tags replayonly) and checks what it imports: the trace package and
// the standard library, nothing of client-go or apimachinery. That is what makes a
// replay start in seconds on a fresh clone.
func TestTheReplayOnlyBuildCompilesNoKubernetesClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "replayonly", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, []string{"github.com/kubeinternals/informers/trace", "github.com/kubeinternals/informers/examples/explore"}, strings.Fields(string(out)),
		"the standard library, and of the rest only the trace package: no k8s.io module")
	build := exec.Command("go", "build", "-tags", "replayonly", "-o", filepath.Join(t.TempDir(), "explore"), ".")
	out, err = build.CombinedOutput()
	require.NoError(t, err, "%s", out)
}
