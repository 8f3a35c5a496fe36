package controller_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
	"github.com/kubeinternals/informers/examples/foo-controller/artifacts"
	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/examples/foo-controller/fooclient"
	"github.com/kubeinternals/informers/examples/internal/crd"
	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

const (
	waitFor = 90 * time.Second
	tick    = 100 * time.Millisecond
)

// cluster holds the clients a test uses to act as the user and to observe the result.
type cluster struct {
	cfg                *rest.Config
	foos               *fooclient.Client
	core, apps, events rest.Interface
}

func newCluster(t *testing.T, ctx context.Context, cfg *rest.Config) *cluster {
	t.Helper()
	_, err := crd.InstallCRD(ctx, cfg, artifacts.CRD(), crd.Options{})
	require.NoError(t, err)
	c := &cluster{cfg: cfg}
	c.foos, err = fooclient.NewClient(cfg, fooclient.Options{})
	require.NoError(t, err)
	c.core, _, err = kube.NewRESTClient(cfg, corev1.SchemeGroupVersion, nil, corev1.AddToScheme)
	require.NoError(t, err)
	c.apps, _, err = kube.NewRESTClient(cfg, appsv1.SchemeGroupVersion, nil, appsv1.AddToScheme)
	require.NoError(t, err)
	c.events, _, err = kube.NewRESTClient(cfg, eventsv1.SchemeGroupVersion, nil, eventsv1.AddToScheme)
	require.NoError(t, err)
	return c
}

func (c *cluster) namespace(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	require.NoError(t, c.core.Post().Resource("namespaces").Body(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}).Do(ctx).Error())
	return name
}

func (c *cluster) createFoo(t *testing.T, ctx context.Context, ns, name, deployment string, replicas int32) *v1alpha1.Foo {
	t.Helper()
	foo, err := c.foos.Foos(ns).Create(ctx, &v1alpha1.Foo{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1alpha1.FooSpec{DeploymentName: deployment, Replicas: ptr.To(replicas)},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return foo
}

// setFooReplicas changes spec.replicas, retrying on conflict (the controller writes status).
func (c *cluster) setFooReplicas(t *testing.T, ctx context.Context, ns, name string, replicas int32) {
	t.Helper()
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		foo, err := c.foos.Foos(ns).Get(ctx, name, metav1.GetOptions{})
		require.NoError(ct, err)
		foo.Spec.Replicas = ptr.To(replicas)
		_, err = c.foos.Foos(ns).Update(ctx, foo, metav1.UpdateOptions{})
		require.NoError(ct, err)
	}, waitFor, tick)
}

func (c *cluster) deployment(ctx context.Context, ns, name string) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	err := c.apps.Get().Namespace(ns).Resource("deployments").Name(name).Do(ctx).Into(d)
	return d, err
}

// eventsAbout lists the events.k8s.io/v1 Events regarding the named Foo with reason.
func (c *cluster) eventsAbout(ctx context.Context, ns, foo, reason string) ([]eventsv1.Event, error) {
	var list eventsv1.EventList
	if err := c.events.Get().Namespace(ns).Resource("events").Do(ctx).Into(&list); err != nil {
		return nil, err
	}
	var out []eventsv1.Event
	for _, ev := range list.Items {
		if ev.Regarding.Kind == "Foo" && ev.Regarding.Name == foo && ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out, nil
}

// startController runs a new controller, with resync off so that only events drive it,
// until the returned stop function is called;
// stop asserts that Run returned nil, i.e. it shut down cleanly.
func startController(t *testing.T, cfg *rest.Config) (stop func()) {
	t.Helper()
	c, err := controller.New(cfg, controller.Options{ResyncPeriod: -1, Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// Goroutine owned by this test: it runs the controller until stop cancels ctx.
	go func() { done <- c.Run(ctx) }()
	var once bool
	stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err, "Run after a graceful stop")
		case <-time.After(60 * time.Second):
			t.Fatal("Run did not return within 60s of ctx ending")
		}
	}
	t.Cleanup(stop)
	return stop
}

func TestFooControllerAgainstACluster(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Profile: testenv.Cluster})
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	c := newCluster(t, ctx, env.Config)
	ns := c.namespace(t, ctx, "foos")
	stop := startController(t, env.Config)

	foo := c.createFoo(t, ctx, ns, "example-foo", "example-foo", 1)

	t.Run("a Foo gets its nginx Deployment with a controller owner reference to the Foo", func(t *testing.T) {
		var d *appsv1.Deployment
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			var err error
			d, err = c.deployment(ctx, ns, "example-foo")
			require.NoError(ct, err)
		}, waitFor, tick)
		ref := metav1.GetControllerOf(d)
		require.NotNil(t, ref)
		assert.Equal(t, "samplecontroller.k8s.io/v1alpha1", ref.APIVersion)
		assert.Equal(t, "Foo", ref.Kind)
		assert.Equal(t, foo.Name, ref.Name)
		assert.Equal(t, foo.UID, ref.UID)
		assert.Equal(t, map[string]string{"app": "nginx", "controller": "example-foo"}, d.Labels)
		assert.Equal(t, int32(1), *d.Spec.Replicas)
	})

	t.Run("status.availableReplicas is copied from the Deployment once its pods are available", func(t *testing.T) {
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			got, err := c.foos.Foos(ns).Get(ctx, "example-foo", metav1.GetOptions{})
			require.NoError(ct, err)
			assert.Equal(ct, int32(1), got.Status.AvailableReplicas)
		}, waitFor, tick)
	})

	t.Run("changing the Foo's replicas scales the Deployment and the status follows", func(t *testing.T) {
		c.setFooReplicas(t, ctx, ns, "example-foo", 3)
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			d, err := c.deployment(ctx, ns, "example-foo")
			require.NoError(ct, err)
			assert.Equal(ct, int32(3), *d.Spec.Replicas)
			got, err := c.foos.Foos(ns).Get(ctx, "example-foo", metav1.GetOptions{})
			require.NoError(ct, err)
			assert.Equal(ct, int32(3), got.Status.AvailableReplicas)
		}, waitFor, tick)
	})

	t.Run("a Deployment scaled by hand is scaled back: its update event leads to the owning Foo", func(t *testing.T) {
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			d, err := c.deployment(ctx, ns, "example-foo")
			require.NoError(ct, err)
			d.Spec.Replicas = ptr.To[int32](5)
			require.NoError(ct, c.apps.Put().Namespace(ns).Resource("deployments").Name(d.Name).Body(d).Do(ctx).Error())
		}, waitFor, tick)
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			d, err := c.deployment(ctx, ns, "example-foo")
			require.NoError(ct, err)
			assert.Equal(ct, int32(3), *d.Spec.Replicas)
		}, waitFor, tick)
	})

	t.Run("a Deployment the Foo does not own is left alone and a Warning ErrResourceExists Event is recorded", func(t *testing.T) {
		theirs := unownedDeployment(ns, "taken")
		require.NoError(t, c.apps.Post().Namespace(ns).Resource("deployments").Body(theirs).Do(ctx).Error())
		c.createFoo(t, ctx, ns, "squatter", "taken", 2)

		var evs []eventsv1.Event
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			var err error
			evs, err = c.eventsAbout(ctx, ns, "squatter", controller.ReasonResourceExists)
			require.NoError(ct, err)
			assert.NotEmpty(ct, evs)
		}, waitFor, tick)
		assert.Equal(t, corev1.EventTypeWarning, evs[0].Type)
		assert.Equal(t, `Resource "taken" already exists and is not managed by Foo`, evs[0].Note)
		d, err := c.deployment(ctx, ns, "taken")
		require.NoError(t, err)
		assert.Empty(t, d.OwnerReferences, "the controller did not adopt it")
		assert.Equal(t, int32(1), *d.Spec.Replicas, "the controller did not scale it")
	})

	t.Run("a Foo without deploymentName gets one Warning InvalidSpec Event and is not retried", func(t *testing.T) {
		c.createFoo(t, ctx, ns, "nameless", "", 1)
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			evs, err := c.eventsAbout(ctx, ns, "nameless", controller.ReasonInvalidSpec)
			require.NoError(ct, err)
			assert.Len(ct, evs, 1)
		}, waitFor, tick)
		// A retried key would come back after 5ms, 10ms, 20ms, … and record the Event
		// again each time: within 2s, about eight more — counted by the recorder on the
		// same Event, as its series.
		assert.Never(t, func() bool {
			evs, err := c.eventsAbout(ctx, ns, "nameless", controller.ReasonInvalidSpec)
			return err != nil || len(evs) != 1 || evs[0].Series != nil
		}, 2*time.Second, tick)
	})

	stop()

	t.Run("after a restart, what changed while the controller was down is caught up", func(t *testing.T) {
		c.setFooReplicas(t, ctx, ns, "example-foo", 2)
		c.createFoo(t, ctx, ns, "while-down", "while-down", 1)
		require.NoError(t, c.apps.Delete().Namespace(ns).Resource("deployments").Name("example-foo").Do(ctx).Error())
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			_, err := c.deployment(ctx, ns, "example-foo")
			assert.True(ct, apierrors.IsNotFound(err), "deleted: %v", err)
		}, waitFor, tick)
		_, err := c.deployment(ctx, ns, "while-down")
		require.True(t, apierrors.IsNotFound(err), "nothing acts while the controller is down: %v", err)

		startController(t, env.Config)
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			d, err := c.deployment(ctx, ns, "example-foo")
			require.NoError(ct, err, "the deleted Deployment is recreated")
			assert.Equal(ct, int32(2), *d.Spec.Replicas, "with the replicas set while down")
			d, err = c.deployment(ctx, ns, "while-down")
			require.NoError(ct, err, "the Foo created while down gets its Deployment")
			assert.True(ct, metav1.IsControlledBy(d, &metav1.ObjectMeta{UID: mustGetFoo(ctx, ct, c, ns, "while-down").UID}))
			foo, err := c.foos.Foos(ns).Get(ctx, "while-down", metav1.GetOptions{})
			require.NoError(ct, err)
			assert.Equal(ct, int32(1), foo.Status.AvailableReplicas)
		}, waitFor, tick)
	})
}

func mustGetFoo(ctx context.Context, ct *assert.CollectT, c *cluster, ns, name string) *v1alpha1.Foo {
	foo, err := c.foos.Foos(ns).Get(ctx, name, metav1.GetOptions{})
	require.NoError(ct, err)
	return foo
}
