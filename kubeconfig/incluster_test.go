package kubeconfig

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

// serviceAccountDir writes the three files the kubelet mounts into a pod.
func serviceAccountDir(t *testing.T, token string, ca []byte) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "token"), []byte(token), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "namespace"), []byte("foo-controller"), 0o600))
	return dir
}

func selfSignedCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestInCluster(t *testing.T) {
	ca := selfSignedCA(t)

	t.Run("reads the service variables, the token and the CA from the directory", func(t *testing.T) {
		dir := serviceAccountDir(t, "tok-123\n", ca)
		t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
		t.Setenv("KUBERNETES_SERVICE_PORT", "443")
		cfg, err := InCluster(dir)
		require.NoError(t, err)
		assert.Equal(t, "https://10.96.0.1:443", cfg.Host)
		assert.Equal(t, "tok-123", cfg.BearerToken, "the trailing newline is not part of the token")
		assert.Equal(t, filepath.Join(dir, "token"), cfg.BearerTokenFile, "named, so the transport rereads a rotated token")
		assert.Equal(t, filepath.Join(dir, "ca.crt"), cfg.CAFile)
		assert.False(t, cfg.Insecure)
	})

	t.Run("an IPv6 service host is bracketed", func(t *testing.T) {
		t.Setenv("KUBERNETES_SERVICE_HOST", "fd00::1")
		t.Setenv("KUBERNETES_SERVICE_PORT", "443")
		cfg, err := InCluster(serviceAccountDir(t, "tok", ca))
		require.NoError(t, err)
		assert.Equal(t, "https://[fd00::1]:443", cfg.Host)
	})

	t.Run("without the service variables it is not in a cluster", func(t *testing.T) {
		t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
		t.Setenv("KUBERNETES_SERVICE_PORT", "")
		_, err := InCluster(serviceAccountDir(t, "tok", ca))
		require.ErrorIs(t, err, rest.ErrNotInCluster)
	})

	t.Run("a missing token or an unreadable CA is an error naming the file", func(t *testing.T) {
		t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
		t.Setenv("KUBERNETES_SERVICE_PORT", "443")
		dir := serviceAccountDir(t, "tok", []byte("not a certificate"))
		_, err := InCluster(dir)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "CA certificate")
		assert.Contains(t, err.Error(), filepath.Join(dir, "ca.crt"))

		require.NoError(t, os.Remove(filepath.Join(dir, "token")))
		_, err = InCluster(dir)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "service account token")
		assert.True(t, errors.Is(err, os.ErrNotExist))
	})

	t.Run("Load falls back to the directory named by KUBEINTERNALS_SERVICEACCOUNT_DIR", func(t *testing.T) {
		dir := serviceAccountDir(t, "sa-token", ca)
		t.Setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
		t.Setenv("KUBERNETES_SERVICE_PORT", "6443")
		t.Setenv(ServiceAccountDirEnv, dir)
		t.Setenv("KUBECONFIG", "")
		t.Setenv("HOME", t.TempDir()) // no ~/.kube/config
		cfg, src, err := Load("")
		require.NoError(t, err)
		assert.Equal(t, SourceInCluster, src)
		assert.Equal(t, "https://127.0.0.1:6443", cfg.Host)
		assert.Equal(t, "sa-token", cfg.BearerToken)
	})
}

func TestInClusterNamespaceReadsTheFileBesideTheToken(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(ServiceAccountDirEnv, dir)
	_, err := InClusterNamespace()
	require.ErrorIs(t, err, os.ErrNotExist, "outside a pod there is no namespace file")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "namespace"), []byte("foo-controller\n"), 0o600))
	ns, err := InClusterNamespace()
	require.NoError(t, err)
	assert.Equal(t, "foo-controller", ns)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "namespace"), nil, 0o600))
	_, err = InClusterNamespace()
	assert.ErrorContains(t, err, "is empty")
}
