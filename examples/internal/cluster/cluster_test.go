package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const kubeconfigYAML = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: t}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`

func TestAKubeconfigClusterTakesNoFaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.WriteFile(path, []byte(kubeconfigYAML), 0o600))
	t.Setenv("KUBECONFIG", path)

	c, err := Start(t.Context(), Options{})
	require.NoError(t, err)
	defer c.Stop() // nothing to stop: it did not start the cluster

	assert.False(t, c.Local)
	assert.Equal(t, "https://127.0.0.1:1", c.Watched.Host)
	assert.Equal(t, float32(200), c.Direct.QPS, "Direct is unthrottled")
	assert.Zero(t, c.Watched.QPS, "Watched is the kubeconfig's, as informers would get it")

	_, err = c.Cut()
	assert.True(t, errors.Is(err, ErrNeedsLocalControlPlane))
	_, err = c.Refuse()
	assert.True(t, errors.Is(err, ErrNeedsLocalControlPlane))
	_, err = c.CompactEtcd(t.Context())
	assert.True(t, errors.Is(err, ErrNeedsLocalControlPlane))
	assert.True(t, errors.Is(c.RestartAPIServer(t.Context()), ErrNeedsLocalControlPlane))
	_, err = c.StartSecondAPIServer(t.Context())
	assert.True(t, errors.Is(err, ErrNeedsLocalControlPlane))
	_, err = c.FailOver(nil)
	assert.True(t, errors.Is(err, ErrNeedsLocalControlPlane))
	_, err = c.FailBack()
	assert.True(t, errors.Is(err, ErrNeedsLocalControlPlane))
}

func TestABrokenKubeconfigIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.WriteFile(path, []byte("not: [yaml"), 0o600))
	t.Setenv("KUBECONFIG", path)
	_, err := Start(t.Context(), Options{})
	require.Error(t, err)
}
