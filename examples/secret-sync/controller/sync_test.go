package controller

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDesiredCopy(t *testing.T) {
	src := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: "db", Namespace: "vault", UID: "u1", ResourceVersion: "42",
			Labels:      map[string]string{"team": "a"},
			Annotations: map[string]string{"note": "x"},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"password": []byte("hunter2")},
	}
	cp := desiredCopy(src, "app")

	t.Run("the copy has the source's name in the target namespace", func(t *testing.T) {
		assert.Equal(t, "db", cp.Name)
		assert.Equal(t, "app", cp.Namespace)
	})
	t.Run("the copy has the source's type and data", func(t *testing.T) {
		assert.Equal(t, corev1.SecretTypeOpaque, cp.Type)
		assert.Equal(t, src.Data, cp.Data)
	})
	t.Run("the copy keeps the source's labels and adds the source-namespace label", func(t *testing.T) {
		assert.Equal(t, map[string]string{"team": "a", LabelSourceNamespace: "vault"}, cp.Labels)
	})
	t.Run("nothing server-owned is carried over, so a PUT of it is unconditional", func(t *testing.T) {
		assert.Empty(t, cp.UID)
		assert.Empty(t, cp.ResourceVersion)
	})
	t.Run("the source's labels are not modified", func(t *testing.T) {
		assert.Equal(t, map[string]string{"team": "a"}, src.Labels)
	})
	t.Run("a source without labels still gets the source-namespace label", func(t *testing.T) {
		bare := src.DeepCopy()
		bare.Labels = nil
		assert.Equal(t, map[string]string{LabelSourceNamespace: "vault"}, desiredCopy(bare, "app").Labels)
	})
}

func TestWants(t *testing.T) {
	c := &Controller{source: "vault", annotation: DefaultAnnotation}
	ns := func(name, value string, mutate ...func(*corev1.Namespace)) *corev1.Namespace {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if value != "" {
			n.Annotations = map[string]string{DefaultAnnotation: value}
		}
		for _, m := range mutate {
			m(n)
		}
		return n
	}
	now := metav1.Now()
	tests := []struct {
		name string
		ns   *corev1.Namespace
		want bool
	}{
		{"a namespace annotated true opts in", ns("app", "true"), true},
		{"a namespace without the annotation does not", ns("app", ""), false},
		{"an annotation other than true does not opt in", ns("app", "yes"), false},
		{"the source namespace is never a target, even annotated", ns("vault", "true"), false},
		{"a namespace being deleted is skipped", ns("app", "true", func(n *corev1.Namespace) { n.DeletionTimestamp = &now }), false},
		{"a terminating namespace is skipped", ns("app", "true", func(n *corev1.Namespace) { n.Status.Phase = corev1.NamespaceTerminating }), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, c.wants(tc.ns))
		})
	}
}

func TestCopyable(t *testing.T) {
	assert.True(t, copyable(&corev1.Secret{Type: corev1.SecretTypeOpaque}), "an Opaque Secret is copied")
	assert.True(t, copyable(&corev1.Secret{Type: corev1.SecretTypeDockerConfigJson}), "a registry Secret is copied")
	assert.False(t, copyable(&corev1.Secret{Type: corev1.SecretTypeServiceAccountToken}), "a service-account token is not copied")
}
