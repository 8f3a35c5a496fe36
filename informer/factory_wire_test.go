package informer_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/listwatch"
)

// acceptRecorder is an apiserver that refuses every request with 403 and remembers
// the Accept header each resource's first request carried.
type acceptRecorder struct {
	mu     sync.Mutex
	accept map[string]string
	want   int           // resources expected
	all    chan struct{} // closed once want resources have been seen
}

func (a *acceptRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	resource := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	a.mu.Lock()
	if _, ok := a.accept[resource]; !ok {
		a.accept[resource] = r.Header.Get("Accept")
		if len(a.accept) == a.want {
			close(a.all)
		}
	}
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`))
}

// acceptHeaders starts a factory with a ConfigMap informer (a built-in type) and an
// Unstructured one for a custom resource, lets each make its first LIST, and returns
// the Accept header of each.
func acceptHeaders(t *testing.T, opts informer.FactoryOptions) map[string]string {
	t.Helper()
	rec := &acceptRecorder{accept: map[string]string{}, want: 2, all: make(chan struct{})}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	require.NoError(t, err)
	opts.Scheme = scheme
	f := informer.NewFactory(&rest.Config{Host: srv.URL}, opts)
	defer f.Shutdown()
	_, err = informer.For[*corev1.ConfigMap](f, informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("configmaps")})
	require.NoError(t, err)
	_, err = informer.For[*unstructured.Unstructured](f, informer.Resource{GVR: schema.GroupVersionResource{Group: "samplecontroller.k8s.io", Version: "v1alpha1", Resource: "foos"}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	f.Start(ctx)
	select {
	case <-rec.all:
	case <-ctx.Done():
		t.Fatal("the informers did not both make a request")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.accept
}

func TestFactoryAsksForProtobufForBuiltInTypesByDefault(t *testing.T) {
	got := acceptHeaders(t, informer.FactoryOptions{})
	assert.Equal(t, "application/vnd.kubernetes.protobuf", got["configmaps"], "a built-in type: protobuf")
	assert.Equal(t, "application/json", got["foos"], "a custom resource: JSON")
}

func TestFactoryJSONOptionAsksForJSONForEveryType(t *testing.T) {
	got := acceptHeaders(t, informer.FactoryOptions{JSON: true})
	assert.Equal(t, "application/json", got["configmaps"])
	assert.Equal(t, "application/json", got["foos"])
}
