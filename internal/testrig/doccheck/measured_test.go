package doccheck

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// measuredRow is the README's row of its "Measured on the reference machine" table
// whose first cell starts with what.
func measuredRow(t *testing.T, what string) string {
	t.Helper()
	readme := read(t, "README.md")
	_, table, ok := strings.Cut(readme, "## Measured on the reference machine")
	require.True(t, ok, "README.md has no measured table")
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "| "+what) {
			return line
		}
	}
	t.Fatalf("README.md's measured table has no row starting %q", what)
	return ""
}

// TestTheReadmesBuildFigureIsForThePinnedControlPlane: the first-build row names the
// Kubernetes release it was measured on, and that is the release
// hack/controlplane/go.mod pins. A new pin fails here until the build is timed again.
func TestTheReadmesBuildFigureIsForThePinnedControlPlane(t *testing.T) {
	pinned := regexp.MustCompile(`(?m)^(?:require)?\s*k8s\.io/kubernetes (v[0-9]+\.[0-9]+\.[0-9]+)`).FindStringSubmatch(read(t, "hack/controlplane/go.mod"))
	require.NotNil(t, pinned, "hack/controlplane/go.mod pins no k8s.io/kubernetes")
	row := measuredRow(t, "first build of the control plane")
	assert.Contains(t, row, "Kubernetes "+pinned[1], "the first-build figure was measured on another control plane than the one pinned: time `make controlplane` again")
}

// TestTheReadmesWholeBenchFigureIsThePublishedRuns: the README's duration of the whole
// `make bench` run is the one bench/RESULTS.md's header gives, so publishing a new run
// fails here until the README says how long it took.
func TestTheReadmesWholeBenchFigureIsThePublishedRuns(t *testing.T) {
	took := regexp.MustCompile(`it took ([0-9]+ min [0-9]+ s)`).FindStringSubmatch(read(t, "bench/RESULTS.md"))
	require.NotNil(t, took, "bench/RESULTS.md's header no longer says how long the run took")
	assert.Contains(t, measuredRow(t, "`make bench BENCH=full`"), took[1])
}
