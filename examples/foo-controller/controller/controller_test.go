package controller

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
	"github.com/kubeinternals/informers/workqueue"
)

func testFoo(replicas *int32) *v1alpha1.Foo {
	return &v1alpha1.Foo{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a", UID: types.UID("uid-1")},
		Spec:       v1alpha1.FooSpec{DeploymentName: "web-dep", Replicas: replicas},
	}
}

func TestNewDeployment(t *testing.T) {
	foo := testFoo(ptr.To[int32](3))
	d := newDeployment(foo)

	t.Run("it is named by spec.deploymentName in the Foo's namespace", func(t *testing.T) {
		assert.Equal(t, "web-dep", d.Name)
		assert.Equal(t, "team-a", d.Namespace)
	})
	t.Run("it asks for the Foo's replicas", func(t *testing.T) {
		require.NotNil(t, d.Spec.Replicas)
		assert.Equal(t, int32(3), *d.Spec.Replicas)
	})
	t.Run("labels, selector and pod template agree on app=nginx and controller=<foo>", func(t *testing.T) {
		want := map[string]string{"app": "nginx", "controller": "web"}
		assert.Equal(t, want, d.Labels)
		assert.Equal(t, want, d.Spec.Selector.MatchLabels)
		assert.Equal(t, want, d.Spec.Template.Labels)
	})
	t.Run("it runs one nginx:latest container", func(t *testing.T) {
		require.Len(t, d.Spec.Template.Spec.Containers, 1)
		assert.Equal(t, "nginx:latest", d.Spec.Template.Spec.Containers[0].Image)
	})
	t.Run("it carries a controller owner reference to the Foo, with the Foo's kind although the cached Foo has no TypeMeta", func(t *testing.T) {
		ref := metav1.GetControllerOf(d)
		require.NotNil(t, ref)
		assert.Equal(t, metav1.OwnerReference{
			APIVersion: "samplecontroller.k8s.io/v1alpha1", Kind: "Foo", Name: "web", UID: "uid-1",
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}, *ref)
		assert.True(t, metav1.IsControlledBy(d, foo))
	})
	t.Run("the Foo is not modified", func(t *testing.T) {
		assert.Equal(t, testFoo(ptr.To[int32](3)), foo)
	})
}

func TestOwnerFoo(t *testing.T) {
	ref := func(apiVersion, kind, name string, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: "u", Controller: ptr.To(controller)}
	}
	dep := func(refs ...metav1.OwnerReference) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", OwnerReferences: refs}}
	}
	tests := []struct {
		name   string
		dep    *appsv1.Deployment
		want   Key
		wantOK bool
	}{
		{"a Deployment controlled by a Foo resolves to that Foo in the Deployment's namespace",
			dep(ref("samplecontroller.k8s.io/v1alpha1", "Foo", "web", true)), Key{"ns", "web"}, true},
		{"any version of the samplecontroller group counts",
			dep(ref("samplecontroller.k8s.io/v1beta1", "Foo", "web", true)), Key{"ns", "web"}, true},
		{"a Deployment without owner references belongs to no Foo",
			dep(), Key{}, false},
		{"a Foo owner reference that is not the controller is not followed",
			dep(ref("samplecontroller.k8s.io/v1alpha1", "Foo", "web", false)), Key{}, false},
		{"a controller of another kind is not a Foo",
			dep(ref("apps/v1", "ReplicaSet", "web", true)), Key{}, false},
		{"a Foo kind of another API group is not our Foo",
			dep(ref("example.com/v1", "Foo", "web", true)), Key{}, false},
		{"a malformed apiVersion is ignored, not a panic",
			dep(ref("a/b/c", "Foo", "web", true)), Key{}, false},
		{"the controller reference is found among several references",
			dep(ref("v1", "ConfigMap", "x", false), ref("samplecontroller.k8s.io/v1alpha1", "Foo", "other", true)), Key{"ns", "other"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ownerFoo(tc.dep)
			assert.Equal(t, tc.wantOK, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestNeedsUpdate(t *testing.T) {
	dep := func(replicas *int32) *appsv1.Deployment {
		return &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: replicas}}
	}
	tests := []struct {
		name string
		foo  *v1alpha1.Foo
		dep  *appsv1.Deployment
		want bool
	}{
		{"equal replicas need no update", testFoo(ptr.To[int32](2)), dep(ptr.To[int32](2)), false},
		{"more replicas wanted than the Deployment has need an update", testFoo(ptr.To[int32](3)), dep(ptr.To[int32](2)), true},
		{"fewer replicas wanted need an update", testFoo(ptr.To[int32](1)), dep(ptr.To[int32](2)), true},
		{"a Foo without replicas asks for nothing", testFoo(nil), dep(ptr.To[int32](2)), false},
		{"a Deployment without replicas is updated to the Foo's", testFoo(ptr.To[int32](1)), dep(nil), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, needsUpdate(tc.foo, tc.dep))
		})
	}
}

func TestSettle(t *testing.T) {
	tests := []struct {
		name         string
		err          error
		wantRequeues int
	}{
		{"a successful sync is forgotten", nil, 0},
		{"an invalid spec is forgotten, not retried forever", fmt.Errorf("sync: %w", ErrInvalidSpec), 0},
		{"a Deployment owned by someone else is retried with backoff", fmt.Errorf("sync: %w", ErrResourceExists), 2},
		{"any other error is retried with backoff", errors.New("connection refused"), 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := workqueue.NewRateLimitingQueue(workqueue.RateLimitingOptions[Key]{})
			defer q.ShutDown()
			key := Key{"ns", "web"}
			q.AddRateLimited(key) // one earlier failure: success must reset it
			settle(q, key, tc.err)
			assert.Equal(t, tc.wantRequeues, q.NumRequeues(key))
		})
	}
}
