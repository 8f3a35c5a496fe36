package fooclient_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
	"github.com/kubeinternals/informers/examples/foo-controller/artifacts"
	"github.com/kubeinternals/informers/examples/foo-controller/fooclient"
	"github.com/kubeinternals/informers/examples/internal/crd"
	"github.com/kubeinternals/informers/examples/internal/events"
	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

const ns = "fooclient-test"

// setup starts an API server, installs the Foo CRD and creates the test namespace.
func setup(t *testing.T, opts testenv.Options) (*testenv.Env, *fooclient.Client, context.Context) {
	t.Helper()
	env := testenv.Start(t, opts)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)

	_, err := crd.InstallCRD(ctx, env.Config, artifacts.CRD(), crd.Options{})
	require.NoError(t, err)
	core, _, err := kube.NewRESTClient(env.Config, corev1.SchemeGroupVersion, nil, corev1.AddToScheme)
	require.NoError(t, err)
	require.NoError(t, core.Post().Resource("namespaces").
		Body(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}).Do(ctx).Error())

	c, err := fooclient.NewClient(env.Config, fooclient.Options{})
	require.NoError(t, err)
	return env, c, ctx
}

func newFoo(name string, replicas int32) *v1alpha1.Foo {
	return &v1alpha1.Foo{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"test": "fooclient"}},
		Spec:       v1alpha1.FooSpec{DeploymentName: name, Replicas: ptr.To(replicas)},
	}
}

func TestFooLifecycleAgainstAnAPIServer(t *testing.T) {
	_, c, ctx := setup(t, testenv.Options{})
	foos := c.Foos(ns)
	var created *v1alpha1.Foo

	t.Run("Create returns the stored Foo with uid, resourceVersion and the spec sent", func(t *testing.T) {
		in := newFoo("example-foo", 1)
		in.Status.AvailableReplicas = 5 // ignored: status is a subresource
		var err error
		created, err = foos.Create(ctx, in, metav1.CreateOptions{})
		require.NoError(t, err)
		assert.NotEmpty(t, created.UID)
		assert.NotEmpty(t, created.ResourceVersion)
		assert.Equal(t, ns, created.Namespace)
		assert.Equal(t, int32(1), *created.Spec.Replicas)
		assert.Zero(t, created.Status.AvailableReplicas, "status in a create body is dropped")
	})
	require.NotNil(t, created, "the remaining steps need the created Foo")

	t.Run("Create of an existing name is AlreadyExists", func(t *testing.T) {
		_, err := foos.Create(ctx, newFoo("example-foo", 1), metav1.CreateOptions{})
		assert.True(t, apierrors.IsAlreadyExists(err), "%v", err)
	})

	t.Run("the CRD schema refuses replicas outside 1..10", func(t *testing.T) {
		for _, r := range []int32{0, 11} {
			_, err := foos.Create(ctx, newFoo("bad-replicas", r), metav1.CreateOptions{})
			assert.True(t, apierrors.IsInvalid(err), "replicas %d: %v", r, err)
			assert.Contains(t, err.Error(), "spec.replicas")
		}
	})

	t.Run("Get returns what Create stored", func(t *testing.T) {
		got, err := foos.Get(ctx, "example-foo", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, created.UID, got.UID)
		assert.Equal(t, created.ResourceVersion, got.ResourceVersion)
		assert.Equal(t, created.Spec, got.Spec)
	})

	// Open the watch now, from the created resourceVersion, to see the writes below.
	w, err := foos.Watch(ctx, metav1.ListOptions{ResourceVersion: created.ResourceVersion})
	require.NoError(t, err)
	defer w.Stop()

	var updated *v1alpha1.Foo
	t.Run("Update changes the spec, ignores status, and bumps the resourceVersion", func(t *testing.T) {
		in := created.DeepCopy()
		in.Spec.Replicas = ptr.To[int32](3)
		in.Status.AvailableReplicas = 9
		var err error
		updated, err = foos.Update(ctx, in, metav1.UpdateOptions{})
		require.NoError(t, err)
		assert.Equal(t, int32(3), *updated.Spec.Replicas)
		assert.Zero(t, updated.Status.AvailableReplicas)
		assert.NotEqual(t, created.ResourceVersion, updated.ResourceVersion)
	})
	require.NotNil(t, updated)

	t.Run("Update with a stale resourceVersion is a Conflict and changes nothing", func(t *testing.T) {
		stale := created.DeepCopy()
		stale.Spec.Replicas = ptr.To[int32](7)
		_, err := foos.Update(ctx, stale, metav1.UpdateOptions{})
		assert.True(t, apierrors.IsConflict(err), "%v", err)
		got, err := foos.Get(ctx, "example-foo", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, int32(3), *got.Spec.Replicas)
	})

	var withStatus *v1alpha1.Foo
	t.Run("UpdateStatus writes status and ignores spec changes", func(t *testing.T) {
		in := updated.DeepCopy()
		in.Status.AvailableReplicas = 2
		in.Spec.Replicas = ptr.To[int32](8)
		var err error
		withStatus, err = foos.UpdateStatus(ctx, in, metav1.UpdateOptions{FieldManager: "foo-controller"})
		require.NoError(t, err)
		assert.Equal(t, int32(2), withStatus.Status.AvailableReplicas)
		assert.Equal(t, int32(3), *withStatus.Spec.Replicas, "spec in a status update is dropped")
	})
	require.NotNil(t, withStatus)

	t.Run("List returns the Foo, and a label selector filters", func(t *testing.T) {
		_, err := foos.Create(ctx, &v1alpha1.Foo{ObjectMeta: metav1.ObjectMeta{Name: "unlabelled"},
			Spec: v1alpha1.FooSpec{DeploymentName: "u", Replicas: ptr.To[int32](1)}}, metav1.CreateOptions{})
		require.NoError(t, err)

		all, err := foos.List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"example-foo", "unlabelled"}, names(all.Items))
		assert.NotEmpty(t, all.ResourceVersion)

		labelled, err := foos.List(ctx, metav1.ListOptions{LabelSelector: "test=fooclient"})
		require.NoError(t, err)
		assert.Equal(t, []string{"example-foo"}, names(labelled.Items))

		everywhere, err := c.Foos("").List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"example-foo", "unlabelled"}, names(everywhere.Items))
	})

	t.Run("Delete removes the Foo and Get then says NotFound", func(t *testing.T) {
		require.NoError(t, foos.Delete(ctx, "example-foo", metav1.DeleteOptions{}))
		_, err := foos.Get(ctx, "example-foo", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "%v", err)
		err = foos.Delete(ctx, "example-foo", metav1.DeleteOptions{})
		assert.True(t, apierrors.IsNotFound(err), "deleting twice: %v", err)
	})

	t.Run("the watch saw every write to example-foo in order, as typed Foos", func(t *testing.T) {
		type seen struct {
			Type watch.EventType
			RV   string
		}
		want := []seen{
			{watch.Modified, updated.ResourceVersion},
			{watch.Modified, withStatus.ResourceVersion},
			{watch.Deleted, ""}, // the delete's RV is new; checked below
		}
		var got []seen
		for len(got) < len(want) {
			select {
			case ev, ok := <-w.ResultChan():
				require.True(t, ok, "watch closed early after %v", got)
				foo, isFoo := ev.Object.(*v1alpha1.Foo)
				require.True(t, isFoo, "event object is %T", ev.Object)
				if foo.Name != "example-foo" {
					continue // the "unlabelled" Foo's ADDED
				}
				got = append(got, seen{ev.Type, foo.ResourceVersion})
			case <-ctx.Done():
				t.Fatalf("watch events so far %v: %v", got, ctx.Err())
			}
		}
		assert.Equal(t, want[:2], got[:2])
		assert.Equal(t, watch.Deleted, got[2].Type)
		assert.NotEqual(t, withStatus.ResourceVersion, got[2].RV)
	})
}

func TestWatchFromACompactedResourceVersionReportsGone(t *testing.T) {
	// Why no watch cache: the apiserver's watch cache keeps its own window of recent
	// events and could still serve the old resourceVersion after etcd compacted it.
	env, c, ctx := setup(t, testenv.Options{APIServerFlags: []string{"--watch-cache=false"}})
	foos := c.Foos(ns)
	first, err := foos.Create(ctx, newFoo("old", 1), metav1.CreateOptions{})
	require.NoError(t, err)
	// Two more writes, so that the revision right after first is history, not the head:
	// compaction keeps the revision it compacts at.
	later, err := foos.Create(ctx, newFoo("new", 1), metav1.CreateOptions{})
	require.NoError(t, err)
	later.Spec.Replicas = ptr.To[int32](2)
	_, err = foos.Update(ctx, later, metav1.UpdateOptions{})
	require.NoError(t, err)
	rev, err := env.CompactEtcd(ctx)
	require.NoError(t, err)
	firstRV, err := strconv.ParseInt(first.ResourceVersion, 10, 64)
	require.NoError(t, err)
	require.Greater(t, rev, firstRV+1, "the watch start must be compacted away")

	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// Pitfall (see Foos.Watch): the 410 arrives as an ERROR event, not as an error from Watch.
	w, err := foos.Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
	require.NoError(t, err, "the watch request itself succeeds")
	defer w.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			require.True(t, ok, "watch closed without an ERROR event")
			if ev.Type != watch.Error {
				continue
			}
			status, isStatus := ev.Object.(*metav1.Status)
			require.True(t, isStatus, "ERROR event object is %T", ev.Object)
			assert.EqualValues(t, 410, status.Code, "%+v", status)
			return
		case <-ctx.Done():
			t.Fatal("no ERROR event before the deadline")
		}
	}
}

func TestEventAboutAFooIsListed(t *testing.T) {
	env, c, ctx := setup(t, testenv.Options{})
	foo, err := c.Foos(ns).Create(ctx, newFoo("evented", 1), metav1.CreateOptions{})
	require.NoError(t, err)

	// The controller's scheme: Foo plus the built-in kinds it records events about.
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{v1alpha1.AddToScheme, appsv1.AddToScheme, corev1.AddToScheme} {
		require.NoError(t, add(scheme))
	}
	rec, err := events.NewRecorder(env.Config, events.Options{Scheme: scheme, ReportingController: "kubeinternals.io/foo-controller"})
	require.NoError(t, err)
	rec.Eventf(ctx, foo, events.TypeWarning, "ErrResourceExists", "Sync",
		"Resource %q already exists and is not managed by Foo", foo.Spec.DeploymentName)

	evClient, _, err := kube.NewRESTClient(env.Config, eventsv1.SchemeGroupVersion, nil, eventsv1.AddToScheme)
	require.NoError(t, err)
	list := &eventsv1.EventList{}
	require.NoError(t, evClient.Get().Namespace(ns).Resource("events").
		Param("fieldSelector", fields.OneTermEqualSelector("regarding.uid", string(foo.UID)).String()).
		Do(ctx).Into(list))
	require.Len(t, list.Items, 1)
	ev := list.Items[0]
	assert.Equal(t, "Foo", ev.Regarding.Kind)
	assert.Equal(t, "samplecontroller.k8s.io/v1alpha1", ev.Regarding.APIVersion)
	assert.Equal(t, "evented", ev.Regarding.Name)
	assert.Equal(t, events.TypeWarning, ev.Type)
	assert.Equal(t, "ErrResourceExists", ev.Reason)
	assert.Equal(t, `Resource "evented" already exists and is not managed by Foo`, ev.Note)
	assert.Equal(t, "kubeinternals.io/foo-controller", ev.ReportingController)
}

func names(items []v1alpha1.Foo) []string {
	out := make([]string, 0, len(items))
	for _, f := range items {
		out = append(out, f.Name)
	}
	return out
}
