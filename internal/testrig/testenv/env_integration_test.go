package testenv_test

import (
	"context"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	_ = appsv1.AddToScheme(s)
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

func restClient(t *testing.T, cfg *rest.Config, gv schema.GroupVersion) *rest.RESTClient {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	if gv.Group == "" {
		c.APIPath = "/api"
	}
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	rc, err := rest.RESTClientFor(c)
	require.NoError(t, err)
	return rc
}

func TestAPIServerProfileListsNamespacesAndWatchesAConfigMap(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	core := restClient(t, env.Config, corev1.SchemeGroupVersion)

	var nss corev1.NamespaceList
	require.NoError(t, core.Get().Resource("namespaces").Do(ctx).Into(&nss))
	names := map[string]bool{}
	for _, ns := range nss.Items {
		names[ns.Name] = true
	}
	assert.True(t, names["default"] && names["kube-system"], "namespaces: %v", names)

	var cms corev1.ConfigMapList
	require.NoError(t, core.Get().Namespace("default").Resource("configmaps").Do(ctx).Into(&cms))
	w, err := core.Get().Namespace("default").Resource("configmaps").
		VersionedParams(&metav1.ListOptions{Watch: true, ResourceVersion: cms.ResourceVersion}, metav1.ParameterCodec).Watch(ctx)
	require.NoError(t, err)
	defer w.Stop()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hello"}, Data: map[string]string{"k": "v"}}
	require.NoError(t, core.Post().Namespace("default").Resource("configmaps").Body(cm).Do(ctx).Error())
	require.NoError(t, core.Delete().Namespace("default").Resource("configmaps").Name("hello").Do(ctx).Error())

	var seen []watch.EventType
	for len(seen) < 2 {
		select {
		case ev := <-w.ResultChan():
			obj, ok := ev.Object.(*corev1.ConfigMap)
			require.True(t, ok, "event %s carries %T", ev.Type, ev.Object)
			if obj.Name == "hello" {
				seen = append(seen, ev.Type)
			}
		case <-ctx.Done():
			t.Fatalf("watch saw only %v", seen)
		}
	}
	assert.Equal(t, []watch.EventType{watch.Added, watch.Deleted}, seen)
}

func TestStopLeavesNoProcessPortOrDirectory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := testenv.BinDir(); err != nil && os.Getenv(testenv.RequireEnv) != "1" {
		t.Skipf("skipping: %v", err)
	}
	env, err := testenv.Launch(ctx, testenv.Options{})
	require.NoError(t, err)
	pids := env.PIDs()
	require.Len(t, pids, 2, "etcd and kube-apiserver")
	host := env.Config.Host
	env.Stop()

	for _, pid := range pids {
		assert.False(t, processAlive(pid), "pid %d still alive after Stop", pid)
	}
	_, err = os.Stat(env.Dir)
	assert.True(t, os.IsNotExist(err), "directory %s still exists", env.Dir)
	port, _ := strconv.Atoi(host[len("https://127.0.0.1:"):])
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	require.NoError(t, err, "apiserver port still taken after Stop")
	l.Close()
}

func TestStopAPIServerRefusesConnectionsUntilStartAPIServer(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	core := restClient(t, env.Config, corev1.SchemeGroupVersion)
	get := func() error { return core.Get().Resource("namespaces").Name("default").Do(ctx).Error() }
	require.NoError(t, get())

	require.NoError(t, env.StopAPIServer())
	err := get()
	assert.True(t, utilnet.IsConnectionRefused(err), "while stopped, a request is refused as by a down apiserver: %v", err)
	require.NoError(t, env.StopAPIServer(), "stopping a stopped apiserver does nothing")
	require.NoError(t, env.StartAPIServer(ctx))
	require.NoError(t, get(), "served again once StartAPIServer returns")
	assert.Error(t, env.StartAPIServer(ctx), "a second start while it runs is refused")
}

func TestClusterProfileRunsADeploymentAndCollectsItsReplicaSet(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Profile: testenv.Cluster})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	apps := restClient(t, env.Config, appsv1.SchemeGroupVersion)

	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}},
			},
		},
	}
	require.NoError(t, apps.Post().Namespace("default").Resource("deployments").Body(d).Do(ctx).Error())

	eventually(t, ctx, "the Deployment becomes Available with 2 replicas", func() bool {
		var got appsv1.Deployment
		if err := apps.Get().Namespace("default").Resource("deployments").Name("web").Do(ctx).Into(&got); err != nil {
			return false
		}
		return got.Status.AvailableReplicas == 2
	})
	var rss appsv1.ReplicaSetList
	require.NoError(t, apps.Get().Namespace("default").Resource("replicasets").Do(ctx).Into(&rss))
	require.Len(t, rss.Items, 1)
	rsName := rss.Items[0].Name

	require.NoError(t, apps.Delete().Namespace("default").Resource("deployments").Name("web").
		Body(&metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}).Do(ctx).Error())
	eventually(t, ctx, "the ReplicaSet is garbage-collected", func() bool {
		err := apps.Get().Namespace("default").Resource("replicasets").Name(rsName).Do(ctx).Error()
		return apierrors.IsNotFound(err)
	})
}

func eventually(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting until %s", what)
		case <-tick.C:
		}
	}
}
