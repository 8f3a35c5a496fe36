package informer_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
	"github.com/kubeinternals/informers/listwatch"
)

func integrationEnv(t *testing.T) (*testenv.Env, *informer.Factory, context.Context) {
	t.Helper()
	env := testenv.Start(t, testenv.Options{})
	scheme, err := listwatch.NewScheme(corev1.AddToScheme, appsv1.AddToScheme)
	require.NoError(t, err)
	f := informer.NewFactory(env.Config, informer.FactoryOptions{Scheme: scheme})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(func() { cancel(); f.Shutdown() })
	return env, f, ctx
}

func client(t *testing.T, cfg *rest.Config, gv schema.GroupVersion) *rest.RESTClient {
	t.Helper()
	c, err := listwatch.NewRESTClient(cfg, gv)
	require.NoError(t, err)
	return c
}

func post(t *testing.T, ctx context.Context, c *rest.RESTClient, ns, resource string, obj any) {
	t.Helper()
	body, err := json.Marshal(obj)
	require.NoError(t, err)
	req := c.Post().Resource(resource).Body(body).SetHeader("Content-Type", "application/json")
	if ns != "" {
		req = req.Namespace(ns)
	}
	require.NoError(t, req.Do(ctx).Error())
}

func eventually(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting until %s", what)
		case <-tick.C:
		}
	}
}

var configMaps = informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "default"}

func TestIntegrationConfigMapInformerFollowsTheAPIServerAndLateHandlersCatchUp(t *testing.T) {
	env, f, ctx := integrationEnv(t)
	core := client(t, env.Config, corev1.SchemeGroupVersion)
	post(t, ctx, core, "default", "configmaps", defaultCM("before"))

	inf, err := informer.For[*corev1.ConfigMap](f, configMaps)
	require.NoError(t, err)
	again, err := informer.For[*corev1.ConfigMap](f, configMaps)
	require.NoError(t, err)
	require.Same(t, inf, again, "one shared informer per resource")
	early := &recorder{}
	earlyReg, err := inf.AddEventHandler(early)
	require.NoError(t, err)
	f.Start(ctx)
	require.NoError(t, f.WaitForCacheSync(ctx))
	require.NoError(t, informer.WaitForCacheSync(ctx, earlyReg))
	assert.Equal(t, []string{"add before"}, early.summary())

	// A handler added to the running informer gets the cache replayed first.
	late := &recorder{}
	lateReg, err := inf.AddEventHandler(late)
	require.NoError(t, err)
	require.NoError(t, informer.WaitForCacheSync(ctx, lateReg))
	require.Len(t, late.get(), 1)
	assert.True(t, late.get()[0].isInInitialList)

	post(t, ctx, core, "default", "configmaps", defaultCM("after"))
	require.NoError(t, core.Delete().Namespace("default").Resource("configmaps").Name("before").Do(ctx).Error())
	eventually(t, ctx, "both handlers saw the create and the delete", func() bool {
		return len(early.get()) == 3 && len(late.get()) == 3
	})
	assert.Equal(t, []string{"add before", "add after", "delete before"}, early.summary())
	assert.Equal(t, []string{"add before", "add after", "delete before"}, late.summary())

	// After removal, the late handler hears nothing more.
	inf.RemoveEventHandler(lateReg)
	post(t, ctx, core, "default", "configmaps", defaultCM("third"))
	eventually(t, ctx, "the remaining handler saw the third configmap", func() bool { return len(early.get()) == 4 })
	assert.Len(t, late.get(), 3)

	// The cache equals a direct LIST.
	var list corev1.ConfigMapList
	require.NoError(t, core.Get().Namespace("default").Resource("configmaps").Do(ctx).Into(&list))
	var names []string
	for _, c := range list.Items {
		names = append(names, "default/"+c.Name)
	}
	assert.ElementsMatch(t, names, inf.Indexer().ListKeys())
}

func TestIntegrationDeploymentInformerSeesScaleUpdates(t *testing.T) {
	env, f, ctx := integrationEnv(t)
	apps := client(t, env.Config, appsv1.SchemeGroupVersion)
	inf, err := informer.For[*appsv1.Deployment](f, informer.Resource{GVR: appsv1.SchemeGroupVersion.WithResource("deployments")})
	require.NoError(t, err)
	rec := &deploymentReplicas{}
	_, err = inf.AddEventHandler(informer.HandlerFuncs[*appsv1.Deployment]{
		AddFunc:    func(d *appsv1.Deployment, _ bool) { rec.set(*d.Spec.Replicas) },
		UpdateFunc: func(_, d *appsv1.Deployment) { rec.set(*d.Spec.Replicas) },
	})
	require.NoError(t, err)
	f.Start(ctx)
	require.NoError(t, f.WaitForCacheSync(ctx))

	labels := map[string]string{"app": "web"}
	post(t, ctx, apps, "default", "deployments", &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}},
		},
	})
	eventually(t, ctx, "the informer saw 1 replica", func() bool { return rec.get() == 1 })
	patch := []byte(`{"spec":{"replicas":3}}`)
	require.NoError(t, apps.Patch(types.MergePatchType).Namespace("default").Resource("deployments").Name("web").Body(patch).Do(ctx).Error())
	eventually(t, ctx, "the informer saw 3 replicas", func() bool { return rec.get() == 3 })
	got, err := inf.Lister().Namespace("default").Get("web")
	require.NoError(t, err)
	assert.EqualValues(t, 3, *got.Spec.Replicas)
}

func TestIntegrationCustomResourcesThroughUnstructuredAndTheMissingCRDError(t *testing.T) {
	env, f, ctx := integrationEnv(t)
	widgets := informer.Resource{GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, Namespace: "default"}
	inf, err := informer.For[*unstructured.Unstructured](f, widgets)
	require.NoError(t, err)
	f.Start(ctx)

	// Before the CRD exists, WaitForCacheSync says why instead of hanging.
	err = f.WaitForCacheSync(ctx)
	require.ErrorIs(t, err, informer.ErrNotSynced)
	assert.True(t, apierrors.IsNotFound(err), "a missing CRD is a 404 Not Found: %v", err)

	postCRD(t, ctx, env.Config, "example.com", "widgets", "widget", "Widget")
	rec := &unstructuredNames{}
	_, err = inf.AddEventHandler(informer.HandlerFuncs[*unstructured.Unstructured]{
		AddFunc: func(u *unstructured.Unstructured, _ bool) { rec.add(u.GetName()) },
	})
	require.NoError(t, err)
	// The reflector keeps retrying (with backoff) and syncs once the CRD is served.
	select {
	case <-inf.Synced():
	case <-ctx.Done():
		t.Fatal("the informer did not sync after the CRD was created")
	}

	wc := client(t, env.Config, schema.GroupVersion{Group: "example.com", Version: "v1"})
	post(t, ctx, wc, "default", "widgets", map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w1"}, "spec": map[string]any{"size": 3},
	})
	eventually(t, ctx, "the handler saw widget w1", func() bool { return rec.has("w1") })
	obj, ok, err := inf.Indexer().GetByKey("default/w1")
	require.NoError(t, err)
	require.True(t, ok)
	size, _, _ := unstructured.NestedInt64(obj.Object, "spec", "size")
	assert.EqualValues(t, 3, size)
}

type deploymentReplicas struct {
	mu       sync.Mutex
	replicas int32
}

func (d *deploymentReplicas) set(n int32) { d.mu.Lock(); d.replicas = n; d.mu.Unlock() }
func (d *deploymentReplicas) get() int32  { d.mu.Lock(); defer d.mu.Unlock(); return d.replicas }

type unstructuredNames struct {
	mu    sync.Mutex
	names map[string]bool
}

func (u *unstructuredNames) add(n string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.names == nil {
		u.names = map[string]bool{}
	}
	u.names[n] = true
}

func (u *unstructuredNames) has(n string) bool { u.mu.Lock(); defer u.mu.Unlock(); return u.names[n] }

func defaultCM(name string) *corev1.ConfigMap {
	c := cm(name)
	c.Namespace = "default"
	return c
}

// postCRD creates a namespaced custom resource definition, version v1, that keeps
// any fields.
func postCRD(t *testing.T, ctx context.Context, cfg *rest.Config, group, plural, singular, kind string) {
	t.Helper()
	ext := client(t, cfg, schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"})
	post(t, ctx, ext, "", "customresourcedefinitions", map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": plural, "singular": singular, "kind": kind, "listKind": kind + "List"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	})
}
