package controller_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/examples/internal/incluster"
	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

// TestInClusterAsItsServiceAccount runs the secret-sync binary (built static, as
// foo-controller's Dockerfile builds) as the ServiceAccount of artifacts/rbac.yaml on
// the RBAC-enabled embedded cluster, through the in-cluster config path, and drives
// every write it makes: create, update and delete of copies.
func TestInClusterAsItsServiceAccount(t *testing.T) {
	binary := incluster.Build(t, incluster.BuildLine{
		Env: []string{"CGO_ENABLED=0"}, Flags: []string{"-trimpath"},
		Package: "./examples/secret-sync", Output: "secret-sync",
	})
	env := testenv.Start(t, testenv.Options{Profile: testenv.Cluster})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	core, _, err := kube.NewRESTClient(env.Config, corev1.SchemeGroupVersion, nil, corev1.AddToScheme)
	require.NoError(t, err)
	a := api{core: core}

	manifest, err := os.ReadFile(filepath.Join(incluster.RepoRoot(), "examples/secret-sync/artifacts/rbac.yaml"))
	require.NoError(t, err)
	rbac, err := incluster.Parse(manifest)
	require.NoError(t, err)
	require.NoError(t, incluster.Apply(ctx, env.Config, rbac))
	pod, err := incluster.MountServiceAccount(ctx, env.Config, t.TempDir(), "secret-sync", "secret-sync")
	require.NoError(t, err)

	a.namespace(t, ctx, source, false)
	a.putSecret(t, ctx, source, "db", "hunter2")
	a.namespace(t, ctx, "app", true)

	p := incluster.Start(t, binary, []string{"-source-namespace", source, "-log-format=json"}, pod.Env)
	_, err = p.AwaitOutput(time.Minute, `"msg":"connecting"`, `"from":"in-cluster service account"`)
	require.NoError(t, err)

	a.eventuallyValue(t, ctx, "app", "db", "hunter2") // create
	a.putSecret(t, ctx, source, "db", "new")
	a.eventuallyValue(t, ctx, "app", "db", "new") // update
	require.NoError(t, core.Delete().Namespace("app").Resource("secrets").Name("db").Do(ctx).Error())
	a.eventuallyValue(t, ctx, "app", "db", "new") // recreated
	require.NoError(t, core.Delete().Namespace(source).Resource("secrets").Name("db").Do(ctx).Error())
	a.eventuallyValue(t, ctx, "app", "db", "") // delete
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "later",
		Annotations: map[string]string{"secret-sync.kubeinternals.io/enabled": "true"}}}
	require.NoError(t, core.Post().Resource("namespaces").Body(ns).Do(ctx).Error())
	a.putSecret(t, ctx, source, "api-key", "k")
	a.eventuallyValue(t, ctx, "later", "api-key", "k") // a namespace created later

	require.NoError(t, p.Stop(30*time.Second))
	out := p.Output()
	assert.Contains(t, out, `"msg":"stopped cleanly"`)
	assert.NotContains(t, strings.ToLower(out), "forbidden", "no request was refused")
	// Why not "no ERROR line": a copy deleted between the sync's POST (409) and its PUT
	// fails that sync with 404, and the retry creates it; that race is the test's doing.
}
