package kubeconfig

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

func TestResolve(t *testing.T) {
	home := "/home/learner"
	homeConfig := filepath.Join(home, ".kube", "config")
	exists := func(p string) bool { return p == homeConfig }
	missing := func(string) bool { return false }
	sep := string(filepath.ListSeparator)

	tests := []struct {
		name      string
		in        Lookup
		wantPaths []string
		wantSrc   Source
	}{
		{
			name:      "the flag wins over $KUBECONFIG and the home file",
			in:        Lookup{Flag: "/flag", KubeconfigEnv: "/env", Home: home, FileExists: exists},
			wantPaths: []string{"/flag"},
			wantSrc:   SourceFlag,
		},
		{
			name:      "$KUBECONFIG wins over the home file when no flag is given",
			in:        Lookup{KubeconfigEnv: "/env", Home: home, FileExists: exists},
			wantPaths: []string{"/env"},
			wantSrc:   SourceEnv,
		},
		{
			name:      "$KUBECONFIG with several files keeps them all in order and drops empty entries",
			in:        Lookup{KubeconfigEnv: "/a" + sep + sep + "/b", Home: home, FileExists: exists},
			wantPaths: []string{"/a", "/b"},
			wantSrc:   SourceEnv,
		},
		{
			name:      "a $KUBECONFIG of only separators counts as unset",
			in:        Lookup{KubeconfigEnv: sep, Home: home, FileExists: exists},
			wantPaths: []string{homeConfig},
			wantSrc:   SourceHome,
		},
		{
			name:      "~/.kube/config is used when it exists and nothing else is set",
			in:        Lookup{Home: home, FileExists: exists},
			wantPaths: []string{homeConfig},
			wantSrc:   SourceHome,
		},
		{
			name:    "a missing ~/.kube/config falls through to in-cluster",
			in:      Lookup{Home: home, FileExists: missing},
			wantSrc: SourceInCluster,
		},
		{
			name:    "no home directory falls through to in-cluster",
			in:      Lookup{},
			wantSrc: SourceInCluster,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			paths, src := Resolve(tt.in)
			assert.Equal(t, tt.wantSrc, src)
			assert.Equal(t, tt.wantPaths, paths)
		})
	}
}

func TestResolveChecksTheRealFileSystemByDefault(t *testing.T) {
	home := t.TempDir()
	_, src := Resolve(Lookup{Home: home})
	require.Equal(t, SourceInCluster, src, "no file yet")

	writeKubeconfig(t, filepath.Join(home, ".kube", "config"), "https://home.example:6443")
	paths, src := Resolve(Lookup{Home: home})
	require.Equal(t, SourceHome, src)
	require.Equal(t, []string{filepath.Join(home, ".kube", "config")}, paths)
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	flagFile := writeKubeconfig(t, filepath.Join(dir, "flag"), "https://flag.example:6443")
	envFile := writeKubeconfig(t, filepath.Join(dir, "env"), "https://env.example:6443")
	home := filepath.Join(dir, "home")
	writeKubeconfig(t, filepath.Join(home, ".kube", "config"), "https://home.example:6443")
	inCluster := func() (*rest.Config, error) { return &rest.Config{Host: "https://in-cluster:443"}, nil }
	notInCluster := func() (*rest.Config, error) { return nil, rest.ErrNotInCluster }

	t.Run("the flag's file is loaded and its server becomes Host", func(t *testing.T) {
		cfg, src, err := load(Lookup{Flag: flagFile, KubeconfigEnv: envFile, Home: home}, inCluster)
		require.NoError(t, err)
		assert.Equal(t, SourceFlag, src)
		assert.Equal(t, "https://flag.example:6443", cfg.Host)
	})
	t.Run("$KUBECONFIG files are merged and the first one wins", func(t *testing.T) {
		list := envFile + string(filepath.ListSeparator) + flagFile
		cfg, src, err := load(Lookup{KubeconfigEnv: list, Home: home}, inCluster)
		require.NoError(t, err)
		assert.Equal(t, SourceEnv, src)
		assert.Equal(t, "https://env.example:6443", cfg.Host)
	})
	t.Run("~/.kube/config is loaded when nothing else is set", func(t *testing.T) {
		cfg, src, err := load(Lookup{Home: home}, inCluster)
		require.NoError(t, err)
		assert.Equal(t, SourceHome, src)
		assert.Equal(t, "https://home.example:6443", cfg.Host)
	})
	t.Run("the in-cluster config is used when no file applies", func(t *testing.T) {
		cfg, src, err := load(Lookup{Home: filepath.Join(dir, "nohome")}, inCluster)
		require.NoError(t, err)
		assert.Equal(t, SourceInCluster, src)
		assert.Equal(t, "https://in-cluster:443", cfg.Host)
	})
	t.Run("outside a pod with no file the error wraps ErrNoConfig and the in-cluster cause", func(t *testing.T) {
		_, _, err := load(Lookup{}, notInCluster)
		require.ErrorIs(t, err, ErrNoConfig)
		require.ErrorIs(t, err, rest.ErrNotInCluster)
	})
	t.Run("a flag naming a missing file is an error, not a silent fallback", func(t *testing.T) {
		_, src, err := load(Lookup{Flag: filepath.Join(dir, "missing"), Home: home}, inCluster)
		require.Error(t, err)
		assert.Equal(t, SourceFlag, src)
		assert.Contains(t, err.Error(), "missing")
	})
}

func TestLoadReadsTheProcessEnvironment(t *testing.T) {
	dir := t.TempDir()
	envFile := writeKubeconfig(t, filepath.Join(dir, "env"), "https://env.example:6443")
	t.Setenv("KUBECONFIG", envFile)

	cfg, src, err := Load("")
	require.NoError(t, err)
	assert.Equal(t, SourceEnv, src)
	assert.Equal(t, "https://env.example:6443", cfg.Host)
}

func TestSourceString(t *testing.T) {
	for src, want := range map[Source]string{
		SourceFlag:      "-kubeconfig flag",
		SourceEnv:       "$KUBECONFIG",
		SourceHome:      "~/.kube/config",
		SourceInCluster: "in-cluster service account",
		Source(42):      "Source(42)",
	} {
		assert.Equal(t, want, src.String())
	}
}

// writeKubeconfig writes a minimal kubeconfig whose current context points at server.
func writeKubeconfig(t *testing.T, path, server string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	content := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: ` + server + `
users:
- name: u
  user:
    token: t
contexts:
- name: ctx
  context:
    cluster: c
    user: u
current-context: ctx
`
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		t.Fatalf("kubeconfig %s not written", path)
	}
	return path
}
