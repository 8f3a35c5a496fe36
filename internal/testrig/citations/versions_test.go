package citations

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryVersionMentionedIsThePinnedOne holds the pages, comments and scripts to the
// two versions go.mod files pin: client-go's (the root go.mod) and the control plane's
// (hack/controlplane/go.mod). A bump changes go.mod; this test then lists every mention
// still naming the old release.
func TestEveryVersionMentionedIsThePinnedOne(t *testing.T) {
	_, clientGo := pinned(t)
	kube, err := KubernetesVersion("../../../hack/controlplane/go.mod")
	require.NoError(t, err)
	v := Versions{ClientGo: clientGo, Kubernetes: kube}
	require.Equal(t, Minor(v.ClientGo), Minor(v.Kubernetes), "client-go and the control plane are one release")
	wrong, err := VersionMentions("../../..", v)
	require.NoError(t, err)
	t.Logf("pinned: client-go %s, Kubernetes %s", v.ClientGo, v.Kubernetes)
	if len(wrong) > 0 {
		t.Errorf("%d mentions of another release (history belongs in docs/upstream.md):\n%s", len(wrong), strings.Join(wrong, "\n"))
	}
}

func TestAVersionWrappedOntoTheNextLineIsFound(t *testing.T) {
	dir := t.TempDir()
	page := "The zero values are client-go\n  1.36's (RealFIFO, watch-list).\nAnd client-go\n1.37's too.\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "page.md"), []byte(page), 0o644))
	wrong, err := VersionMentions(dir, Versions{ClientGo: "v0.37.2", Kubernetes: "v1.37.2"})
	require.NoError(t, err)
	assert.Equal(t, []string{`page.md:2: "client-go 1.36" names 1.36, want 1.37`}, wrong)
}

func TestAStaleVersionMentionIsFound(t *testing.T) {
	v := Versions{ClientGo: "v0.37.2", Kubernetes: "v1.37.2"}
	for _, tc := range []struct {
		line  string
		stale bool
	}{
		{"It behaves like client-go v0.37.2 — the same cache", false},
		{"It behaves like client-go v0.36.3 — the same cache", true},
		{"zero options are client-go 1.37's", false},
		{"zero options are client-go 1.36's", true},
		{"`k8s.io/client-go@v0.36.3/` once downloaded", true},
		{"the k8s.io requirements (today v0.36)", true},
		{"kube-apiserver v1.37.2 whose connection", false},
		{"kube-apiserver v1.36.3 whose connection", true},
		{"configured against kind 1.36", true},
		{"//go:generate go run k8s.io/code-generator/cmd/deepcopy-gen@v0.36.3 --output-file", true},
		{"a module cache holding code-generator v0.36.3", true},
		{"on by default in 1.33, GA and locked on in 1.36", false},
		{"the default since client-go 1.35+", false},
		{"the default since client-go 1.38+", true},
		{"the binary reports v1.0.0", false},
	} {
		t.Run(tc.line, func(t *testing.T) {
			found := staleMentions(tc.line, v)
			assert.Equal(t, tc.stale, len(found) > 0, "found %v", found)
		})
	}
}
