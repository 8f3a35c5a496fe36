package controller

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
)

// TestAFooDeletedBeforeItsStatusWriteEndsTheSyncQuietly: the Foo is in the cache, its
// Deployment too, and the status write answers 404 — the Foo was deleted between the
// cache read and the write. The sync ends without error and without a requeue, records
// no "synced" Event for an object that is gone, and logs nothing at error level.
func TestAFooDeletedBeforeItsStatusWriteEndsTheSyncQuietly(t *testing.T) {
	var mu sync.Mutex
	var requests []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,` +
			`"message":"foos.samplecontroller.k8s.io \"web\" not found","details":{"name":"web","group":"samplecontroller.k8s.io","kind":"foos"}}`))
	}))
	defer api.Close()

	var out bytes.Buffer
	c, err := New(&rest.Config{Host: api.URL}, Options{Logger: slog.New(slog.NewTextHandler(&out, nil))})
	require.NoError(t, err)
	t.Cleanup(c.queue.ShutDown)
	replicas := int32(1)
	foo := &v1alpha1.Foo{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web", UID: "u1", ResourceVersion: "5"},
		Spec:       v1alpha1.FooSpec{DeploymentName: "web", Replicas: &replicas},
	}
	dep := newDeployment(foo)
	dep.ResourceVersion = "6"
	dep.Status.AvailableReplicas = 1 // the Foo's status says 0: a status write is due
	require.NoError(t, c.foos.Indexer().Add(foo))
	require.NoError(t, c.deployments.Indexer().Add(dep))
	key := Key{Namespace: "team-a", Name: "web"}
	c.queue.Add(key)

	require.True(t, c.processNextWorkItem(t.Context()))
	assert.Zero(t, c.queue.NumRequeues(key), "not retried")
	assert.Zero(t, c.queue.Len(), "not queued again")
	mu.Lock()
	assert.Equal(t, []string{"PUT /apis/samplecontroller.k8s.io/v1alpha1/namespaces/team-a/foos/web/status"}, requests,
		"the status write, and no Event for a Foo that is gone")
	mu.Unlock()
	assert.NotContains(t, out.String(), "level=ERROR", out.String())
	assert.Contains(t, out.String(), `msg="the Foo was deleted while it was synced: no status to write"`)
}
