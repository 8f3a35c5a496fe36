package indexer

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestMetaNamespaceKeyFunc(t *testing.T) {
	tests := []struct {
		name string
		obj  *corev1.ConfigMap
		want string
	}{
		{"a namespaced object is keyed namespace/name", cm("default", "cfg"), "default/cfg"},
		{"a cluster-scoped object is keyed by its name alone", cm("", "cfg"), "cfg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MetaNamespaceKeyFunc(tt.obj)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	t.Run("a nil pointer is an error, not a panic", func(t *testing.T) {
		_, err := MetaNamespaceKeyFunc[*corev1.ConfigMap](nil)
		require.ErrorIs(t, err, ErrNilObject)
	})
	t.Run("an unstructured object is keyed like a typed one", func(t *testing.T) {
		u := &unstructured.Unstructured{}
		u.SetNamespace("ns")
		u.SetName("crd-obj")
		got, err := MetaNamespaceKeyFunc(u)
		require.NoError(t, err)
		assert.Equal(t, "ns/crd-obj", got)
	})
}

func TestSplitMetaNamespaceKey(t *testing.T) {
	valid := []struct {
		name, key, wantNS, wantName string
	}{
		{"namespace/name splits at the slash", "default/cfg", "default", "cfg"},
		{"a key without a slash is a cluster-scoped name", "node-1", "", "node-1"},
	}
	for _, tt := range valid {
		t.Run(tt.name, func(t *testing.T) {
			ns, name, err := SplitMetaNamespaceKey(tt.key)
			require.NoError(t, err)
			assert.Equal(t, tt.wantNS, ns)
			assert.Equal(t, tt.wantName, name)
		})
	}

	malformed := []struct {
		name, key, wantMsg string
	}{
		{"an empty key is rejected", "", "empty key"},
		{"an empty name after the slash is rejected", "default/", "empty name"},
		{"an empty namespace before the slash is rejected", "/cfg", "empty namespace"},
		{"a lone slash is rejected", "/", "empty namespace"},
		{"more than one slash is rejected", "a/b/c", "more than one '/'"},
	}
	for _, tt := range malformed {
		t.Run(tt.name, func(t *testing.T) {
			ns, name, err := SplitMetaNamespaceKey(tt.key)
			require.ErrorIs(t, err, ErrMalformedKey)
			assert.Contains(t, err.Error(), tt.wantMsg)
			assert.Empty(t, ns)
			assert.Empty(t, name)
		})
	}
}

func TestObjectKey(t *testing.T) {
	assert.Equal(t, "ns/n", ObjectKey("ns", "n"))
	assert.Equal(t, "n", ObjectKey("", "n"), "an empty namespace gives a cluster-scoped key")
}

func TestObjectNameStringIsTheObjectsKey(t *testing.T) {
	assert.Equal(t, "ns/n", ObjectName{Namespace: "ns", Name: "n"}.String())
	assert.Equal(t, "n", ObjectName{Name: "n"}.String(), "no namespace: the name alone")
	key, err := MetaNamespaceKeyFunc(cm("ns", "n"))
	require.NoError(t, err)
	assert.Equal(t, key, ObjectName{Namespace: "ns", Name: "n"}.String(), "the key MetaNamespaceKeyFunc gives")
}

// FuzzSplitMetaNamespaceKey checks that SplitMetaNamespaceKey and ObjectKey are
// inverse: every key Split accepts is rebuilt exactly by ObjectKey, and every key
// ObjectKey builds from a valid namespace and name splits back into them.
func FuzzSplitMetaNamespaceKey(f *testing.F) {
	seeds := [][3]string{
		{"", "", ""}, {"/", "ns", ""}, {"a", "", "a"}, {"a/b", "a", "b"}, {"a/", "", "b"},
		{"/b", "ns", "b/c"}, {"a/b/c", "a/b", "c"}, {"kube-system/coredns", "kube-system", "coredns"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, key, namespace, name string) {
		// Split, then join.
		ns, n, err := SplitMetaNamespaceKey(key)
		if err != nil {
			require.ErrorIs(t, err, ErrMalformedKey)
			require.Empty(t, ns)
			require.Empty(t, n)
		} else {
			require.NotEmpty(t, n, "an accepted key has a name")
			require.NotContains(t, n, "/")
			require.NotContains(t, ns, "/")
			require.Equal(t, key, ObjectKey(ns, n), "split then join is the identity")
		}

		// The store's allocation-free key builder agrees with ObjectKey.
		require.Equal(t, ObjectKey(namespace, name), string(appendObjectKey(nil, namespace, name)))

		// Join, then split. Kubernetes names and namespaces never contain '/'.
		if strings.Contains(namespace, "/") || strings.Contains(name, "/") {
			return
		}
		ns, n, err = SplitMetaNamespaceKey(ObjectKey(namespace, name))
		if name == "" {
			require.ErrorIs(t, err, ErrMalformedKey, "a key without a name is malformed")
			return
		}
		require.NoError(t, err)
		require.Equal(t, [2]string{namespace, name}, [2]string{ns, n}, "join then split is the identity")
	})
}
