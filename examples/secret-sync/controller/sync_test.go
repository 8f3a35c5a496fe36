package controller

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/kube"
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

// secretsServer is a tiny API server for Secrets: POST creates (409 AlreadyExists when the
// name is taken), PUT replaces, DELETE removes (404 when absent). It records each request.
type secretsServer struct {
	mu       sync.Mutex
	stored   map[string]bool // namespace/name
	requests []string        // "POST app/db", …
}

func (s *secretsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ns, name string
	var secret corev1.Secret
	if r.Body != nil {
		_ = json.NewDecoder(r.Body).Decode(&secret)
	}
	// /api/v1/namespaces/<ns>/secrets[/<name>]
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) >= 5 {
		ns = parts[3]
	}
	if len(parts) == 6 {
		name = parts[5]
	} else {
		name = secret.Name
	}
	key := ns + "/" + name
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+key)
	gr := schema.GroupResource{Resource: "secrets"}
	var status *apierrors.StatusError
	switch r.Method {
	case http.MethodPost:
		if s.stored[key] {
			status = apierrors.NewAlreadyExists(gr, name)
		}
		s.stored[key] = true
	case http.MethodPut:
		s.stored[key] = true
	case http.MethodDelete:
		if !s.stored[key] {
			status = apierrors.NewNotFound(gr, name)
		}
		delete(s.stored, key)
	}
	w.Header().Set("Content-Type", "application/json")
	if status != nil {
		st := status.Status()
		st.Kind, st.APIVersion = "Status", "v1"
		w.WriteHeader(int(st.Code))
		_ = json.NewEncoder(w).Encode(st)
		return
	}
	_ = json.NewEncoder(w).Encode(&secret)
}

func TestStatsCountWhatTheirNamesSay(t *testing.T) {
	api := &secretsServer{stored: map[string]bool{"app/db": true}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	core, _, err := kube.NewRESTClient(&rest.Config{Host: srv.URL}, corev1.SchemeGroupVersion, nil, corev1.AddToScheme)
	require.NoError(t, err)
	c := &Controller{log: slog.New(slog.DiscardHandler), core: core}
	ctx := t.Context()
	src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "vault"}, Data: map[string][]byte{"v": []byte("1")}}

	require.NoError(t, c.put(ctx, desiredCopy(src, "app")), "app/db exists: POST gets AlreadyExists, then PUT")
	require.NoError(t, c.put(ctx, desiredCopy(src, "web")), "web/db is new: POST creates it")
	require.NoError(t, c.put(ctx, desiredCopy(src, "web")), "web/db now exists: POST, then PUT")
	require.NoError(t, c.remove(ctx, desiredCopy(src, "web")), "DELETE removes web/db")
	require.NoError(t, c.remove(ctx, desiredCopy(src, "web")), "a DELETE of a copy already gone is fine")

	assert.Equal(t, []string{"POST app/db", "PUT app/db", "POST web/db", "POST web/db", "PUT web/db", "DELETE web/db", "DELETE web/db"}, api.requests)
	assert.Equal(t, Stats{Creates: 1, Updates: 2, Deletes: 2}, c.Stats(),
		"Creates counts the one copy created, not the three POSTs; Updates the two PUTs; Deletes both DELETEs, the one that found nothing included")
}
