package controller_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kubeinternals/informers/examples/foo-controller/artifacts"
	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/examples/internal/incluster"
	"github.com/kubeinternals/informers/internal/metricstext"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

// TestInClusterAsItsServiceAccount runs the foo-controller binary, built with the
// Dockerfile's go build line, as the ServiceAccount of artifacts/rbac.yaml on the
// RBAC-enabled embedded cluster, through the in-cluster config path: whatever the
// ClusterRole lacks shows up here as a 403, as it would on kind.
func TestInClusterAsItsServiceAccount(t *testing.T) {
	binary, build := incluster.DockerfileBuild(t, "examples/foo-controller/artifacts/Dockerfile")
	t.Run("the Dockerfile builds a static binary with the Go of go.mod", func(t *testing.T) {
		assert.Contains(t, build.Env, "CGO_ENABLED=0", "the distroless/static base has no libc")
		assert.Equal(t, "./examples/foo-controller", build.Package)
		goMod, err := os.ReadFile(filepath.Join(incluster.RepoRoot(), "go.mod"))
		require.NoError(t, err)
		var goVersion string
		for line := range strings.SplitSeq(string(goMod), "\n") {
			if v, ok := strings.CutPrefix(line, "go "); ok {
				goVersion = v
			}
		}
		parts := strings.SplitN(goVersion, ".", 3)
		require.GreaterOrEqual(t, len(parts), 2, "go directive %q", goVersion)
		assert.Equal(t, "golang:"+parts[0]+"."+parts[1], build.GoImage, "the build image's Go must satisfy go.mod's go %s", goVersion)
	})

	env := testenv.Start(t, testenv.Options{Profile: testenv.Cluster})
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	c := newCluster(t, ctx, env.Config) // the CRD, installed by the admin

	rbac, err := incluster.Parse(artifacts.RBAC())
	require.NoError(t, err)
	require.NoError(t, incluster.Apply(ctx, env.Config, rbac))
	var deployment appsv1.Deployment
	require.NoError(t, yaml.UnmarshalStrict(artifacts.Deployment(), &deployment))
	manifests, err := incluster.Parse(artifacts.Deployment())
	require.NoError(t, err)
	require.NoError(t, incluster.Apply(ctx, env.Config, manifests))

	t.Run("deployment.yaml is admitted in the restricted namespace and its pod runs as the ServiceAccount", func(t *testing.T) {
		// ServiceAccount admission refuses a pod whose ServiceAccount does not exist, and
		// PodSecurity one whose securityContext breaks "restricted"; the ReplicaSet
		// controller would then report FailedCreate and the Deployment never be Available.
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			d, err := c.deployment(ctx, deployment.Namespace, deployment.Name)
			require.NoError(ct, err)
			assert.Equal(ct, int32(2), d.Status.AvailableReplicas)
		}, waitFor, tick)
		var pods corev1.PodList
		require.NoError(t, c.core.Get().Namespace(deployment.Namespace).Resource("pods").Do(ctx).Into(&pods))
		require.Len(t, pods.Items, 2)
		for _, p := range pods.Items {
			assert.Equal(t, "foo-controller", p.Spec.ServiceAccountName)
		}
	})
	// The pod above runs no container (kwok only reports it Running); the binary runs here.
	pod, err := incluster.MountServiceAccount(ctx, env.Config, t.TempDir(), deployment.Namespace, deployment.Spec.Template.Spec.ServiceAccountName)
	require.NoError(t, err)
	// deployment.yaml's arguments, with the endpoints on ports the kernel picks (the
	// last value of a flag wins): the binary runs on the test machine, not in a pod.
	args := append(slices.Clone(deployment.Spec.Template.Spec.Containers[0].Args),
		"-metrics-bind-address=127.0.0.1:0", "-health-probe-bind-address=127.0.0.1:0")
	// The Pod's environment: the service account's variables and the container's own
	// (GOMEMLIMIT).
	podEnv := slices.Clone(pod.Env)
	for _, v := range deployment.Spec.Template.Spec.Containers[0].Env {
		podEnv = append(podEnv, v.Name+"="+v.Value)
	}
	ns := c.namespace(t, ctx, "as-service-account")

	t.Run("the whole life of a Foo succeeds with exactly the permissions rbac.yaml grants", func(t *testing.T) {
		p := incluster.Start(t, binary, args, podEnv)
		_, err := p.AwaitOutput(time.Minute, `"msg":"connecting"`, `"from":"in-cluster service account"`)
		require.NoError(t, err, "it found no kubeconfig and took the in-cluster path")
		_, err = p.AwaitOutput(time.Minute, `"msg":"starting workers"`)
		require.NoError(t, err, "its informers synced: list and watch on foos and deployments are allowed")
		if rss, err := p.RSS(); assert.NoError(t, err) {
			floor := sizingFloor(t)
			t.Logf("resident memory with its caches synced and almost empty: %.1f MiB (docs/sizing.md's F: at most %d MiB)", float64(rss)/(1<<20), floor)
			assert.LessOrEqual(t, rss, int64(floor)<<20, "docs/sizing.md's floor F for foo-controller")
		}
		metrics, probes := endpoint(t, p, "metrics"), endpoint(t, p, "health probes")
		assert.Equal(t, http.StatusOK, get(t, ctx, "http://"+probes+"/healthz").code)
		assert.Equal(t, http.StatusOK, get(t, ctx, "http://"+probes+"/readyz").code, "ready: caches synced, workers running")
		before := scrape(t, ctx, metrics)

		foo := c.createFoo(t, ctx, ns, "life", "life", 1)
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			d, err := c.deployment(ctx, ns, "life")
			require.NoError(ct, err, "create deployments")
			assert.True(ct, metav1.IsControlledBy(d, foo))
			got := mustGetFoo(ctx, ct, c, ns, "life")
			assert.Equal(ct, int32(1), got.Status.AvailableReplicas, "update foos/status")
		}, waitFor, tick)

		// The Foo's create moved every stage's series: the reflector saw the event, the
		// informer applied it and called enqueueFoo, the workqueue took the key.
		after := scrape(t, ctx, metrics)
		for _, series := range []string{
			`reflector_watch_events_total{name="foos.samplecontroller.k8s.io",type="ADDED"}`,
			`informer_handler_duration_seconds_count{name="foos.samplecontroller.k8s.io",handler="enqueueFoo"}`,
			`informer_processing_latency_seconds_count{name="foos.samplecontroller.k8s.io"}`,
			`informer_store_resource_version{name="foos.samplecontroller.k8s.io"}`,
			`workqueue_adds_total{name="foos"}`,
			`workqueue_work_duration_seconds_count{name="foos"}`,
			`reflector_watch_events_total{name="deployments.apps",type="ADDED"}`,
		} {
			assert.Greater(t, after[series], before[series], "%s moved when the Foo was created", series)
		}
		for _, series := range []string{`reflector_lists_total{name="foos.samplecontroller.k8s.io"}`, `reflector_lists_total{name="deployments.apps"}`} {
			assert.Equal(t, 1.0, after[series], "%s: one initial list, no relist", series)
		}
		assert.Contains(t, after, `informer_queued_items{name="foos.samplecontroller.k8s.io"}`)
		assert.Contains(t, after, `informer_handler_backlog_high_water{name="deployments.apps",handler="handleDeployment"}`)

		c.setFooReplicas(t, ctx, ns, "life", 3)
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			d, err := c.deployment(ctx, ns, "life")
			require.NoError(ct, err)
			assert.Equal(ct, int32(3), *d.Spec.Replicas, "update deployments")
			assert.Equal(ct, int32(3), mustGetFoo(ctx, ct, c, ns, "life").Status.AvailableReplicas)
		}, waitFor, tick)

		theirs := unownedDeployment(ns, "theirs")
		require.NoError(t, c.apps.Post().Namespace(ns).Resource("deployments").Body(theirs).Do(ctx).Error())
		c.createFoo(t, ctx, ns, "squatter", "theirs", 1)
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			evs, err := c.eventsAbout(ctx, ns, "squatter", controller.ReasonResourceExists)
			require.NoError(ct, err)
			require.NotEmpty(ct, evs, "create events.k8s.io events")
			assert.Equal(ct, corev1.EventTypeWarning, evs[0].Type)
		}, waitFor, tick)

		require.NoError(t, c.foos.Foos(ns).Delete(ctx, "life", metav1.DeleteOptions{}))
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			_, err := c.deployment(ctx, ns, "life")
			assert.True(ct, apierrors.IsNotFound(err), "the garbage collector removed the owned Deployment: %v", err)
		}, waitFor, tick)

		require.NoError(t, p.Stop(30*time.Second), "SIGTERM ends it cleanly")
		out := p.Output()
		assert.Contains(t, out, `"msg":"stopped cleanly"`)
		assert.NotContains(t, strings.ToLower(out), "forbidden", "no request was refused")
		for line := range strings.SplitSeq(out, "\n") {
			if strings.Contains(line, `"level":"ERROR"`) {
				assert.Contains(t, line, ns+"/squatter", "the only failing syncs are the squatter's (a 409 Conflict is logged at INFO)")
			}
		}
	})

	t.Run("two replicas with -leader-elect: only the leader works; a crashed leader is replaced once its lease expires, a stopped one at the next retry", func(t *testing.T) {
		testFailover(t, ctx, c, binary, args, podEnv, ns)
	})

	role := incluster.Find(rbac, "ClusterRole", "foo-controller")
	require.NotNil(t, role)

	t.Run("without list on foos the watch-list still fills the cache: a watch needs only the watch verb", func(t *testing.T) {
		require.NoError(t, incluster.Replace(ctx, env.Config, withoutVerb(t, role, "foos", "list")))
		require.NoError(t, pod.AwaitCan(ctx, env.Config, false, "list", "samplecontroller.k8s.io", "foos"))
		t.Cleanup(func() { require.NoError(t, incluster.Replace(context.Background(), env.Config, role)) })

		p := incluster.Start(t, binary, args, podEnv)
		_, err := p.AwaitOutput(time.Minute, `"msg":"starting workers"`)
		require.NoError(t, err, "the caches synced from the watch-list without a LIST")
		require.NoError(t, p.Stop(30*time.Second))
	})

	t.Run("without list and watch on foos it exits at once with the 403 as the reason the cache did not sync", func(t *testing.T) {
		// The watch-list is refused (403), so the reflector falls back to LIST in the
		// same cycle, as client-go does; that 403 is the one WaitForCacheSync reports.
		require.NoError(t, incluster.Replace(ctx, env.Config, withoutVerb(t, withoutVerb(t, role, "foos", "list"), "foos", "watch")))
		require.NoError(t, pod.AwaitCan(ctx, env.Config, false, "watch", "samplecontroller.k8s.io", "foos"))
		t.Cleanup(func() { require.NoError(t, incluster.Replace(context.Background(), env.Config, role)) })

		p := incluster.Start(t, binary, args, podEnv)
		select {
		case <-p.Exited():
		case <-time.After(time.Minute):
			t.Fatal("still running a minute after start: a 403 must not be waited out")
		}
		assert.Equal(t, 1, p.ExitCode())
		line, err := p.AwaitOutput(0, `"msg":"controller failed"`, "caches did not sync", "forbidden",
			pod.User, `cannot list resource \"foos\"`)
		require.NoError(t, err, "the reason names who was refused what")
		t.Logf("the reason, as logged: %s", line)
	})

	t.Run("without create on deployments the failing write is logged with its 403", func(t *testing.T) {
		require.NoError(t, incluster.Replace(ctx, env.Config, withoutVerb(t, role, "deployments", "create")))
		require.NoError(t, pod.AwaitCan(ctx, env.Config, false, "create", "apps", "deployments"))
		t.Cleanup(func() { require.NoError(t, incluster.Replace(context.Background(), env.Config, role)) })

		p := incluster.Start(t, binary, args, podEnv)
		_, err := p.AwaitOutput(time.Minute, `"msg":"starting workers"`)
		require.NoError(t, err)
		c.createFoo(t, ctx, ns, "refused", "refused", 1)
		line, err := p.AwaitOutput(time.Minute, `"msg":"sync failed"`, ns+"/refused", "forbidden",
			`cannot create resource \"deployments\"`)
		require.NoError(t, err)
		t.Logf("the failing write, as logged: %s", line)
		_, err = c.deployment(ctx, ns, "refused")
		assert.True(t, apierrors.IsNotFound(err), "%v", err)
		require.NoError(t, p.Stop(30*time.Second))
	})
}

// withoutVerb returns a copy of the ClusterRole whose rule for resource lacks verb.
func withoutVerb(t *testing.T, role *unstructured.Unstructured, resource, verb string) *unstructured.Unstructured {
	t.Helper()
	out := role.DeepCopy()
	rules, _, err := unstructured.NestedSlice(out.Object, "rules")
	require.NoError(t, err)
	removed := false
	for _, r := range rules {
		rule := r.(map[string]any)
		resources, _, _ := unstructured.NestedStringSlice(rule, "resources")
		verbs, _, _ := unstructured.NestedStringSlice(rule, "verbs")
		if slices.Contains(resources, resource) && slices.Contains(verbs, verb) {
			verbs = slices.DeleteFunc(verbs, func(v string) bool { return v == verb })
			require.NoError(t, unstructured.SetNestedStringSlice(rule, verbs, "verbs"))
			removed = true
		}
	}
	require.True(t, removed, "no rule grants %s on %s", verb, resource)
	require.NoError(t, unstructured.SetNestedSlice(out.Object, rules, "rules"))
	return out
}

func unownedDeployment(ns, name string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
		},
	}
}

// endpoint is the address the program logged for what ("metrics", "health probes").
func endpoint(t *testing.T, p *incluster.Process, what string) string {
	t.Helper()
	line, err := p.AwaitOutput(time.Minute, `"msg":"serving `+what+`"`)
	require.NoError(t, err)
	m := regexp.MustCompile(`"addr":"([^"]+)"`).FindStringSubmatch(line)
	require.NotNil(t, m, "no address in %s", line)
	return m[1]
}

type response struct {
	code int
	body string
}

func get(t *testing.T, ctx context.Context, url string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{resp.StatusCode, string(body)}
}

// scrape reads /metrics at addr into series → value (histograms' _count and _sum
// lines included).
func scrape(t *testing.T, ctx context.Context, addr string) map[string]float64 {
	t.Helper()
	r := get(t, ctx, "http://"+addr+"/metrics")
	require.Equal(t, http.StatusOK, r.code)
	out, err := metricstext.Parse(strings.NewReader(r.body))
	require.NoError(t, err)
	return out
}

// sizingFloor is the floor F docs/sizing.md sizes foo-controller's deployment.yaml
// with, in MiB: the line "- `F`, … at most N MiB".
func sizingFloor(t *testing.T) int {
	t.Helper()
	page, err := os.ReadFile(filepath.Join(incluster.RepoRoot(), "docs", "sizing.md"))
	require.NoError(t, err)
	m := regexp.MustCompile("(?m)^- `F`, .* at most ([0-9]+) MiB").FindSubmatch(page)
	require.NotNil(t, m, "docs/sizing.md states foo-controller's floor F")
	n, err := strconv.Atoi(string(m[1]))
	require.NoError(t, err)
	return n
}
