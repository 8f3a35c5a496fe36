package v1alpha1

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

func TestDeepCopySharesNoMemory(t *testing.T) {
	replicas := int32(2)
	orig := &Foo{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"k": "v"}},
		Spec:       FooSpec{DeploymentName: "d", Replicas: &replicas},
	}
	t.Run("changing the copy's replicas leaves the original alone", func(t *testing.T) {
		cp := orig.DeepCopy()
		*cp.Spec.Replicas = 9
		assert.Equal(t, int32(2), *orig.Spec.Replicas)
	})
	t.Run("changing the copy's labels leaves the original alone", func(t *testing.T) {
		cp := orig.DeepCopyObject().(*Foo)
		cp.Labels["k"] = "changed"
		assert.Equal(t, "v", orig.Labels["k"])
	})
	t.Run("a list copy copies every item deeply", func(t *testing.T) {
		list := &FooList{Items: []Foo{*orig}}
		cp := list.DeepCopyObject().(*FooList)
		*cp.Items[0].Spec.Replicas = 7
		assert.Equal(t, int32(2), *orig.Spec.Replicas)
	})
	t.Run("a nil Foo copies to nil", func(t *testing.T) {
		var nilFoo *Foo
		assert.Nil(t, nilFoo.DeepCopy())
	})
}

func TestAddToScheme(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, AddToScheme(scheme))

	t.Run("Foo and FooList are known under samplecontroller.k8s.io/v1alpha1", func(t *testing.T) {
		for obj, kind := range map[runtime.Object]string{&Foo{}: "Foo", &FooList{}: "FooList"} {
			gvks, _, err := scheme.ObjectKinds(obj)
			require.NoError(t, err)
			assert.Equal(t, []schema.GroupVersionKind{SchemeGroupVersion.WithKind(kind)}, gvks)
		}
	})
	t.Run("ListOptions become query parameters for this group version", func(t *testing.T) {
		params, err := runtime.NewParameterCodec(scheme).EncodeParameters(
			&metav1.ListOptions{LabelSelector: "a=b", ResourceVersion: "5"}, SchemeGroupVersion)
		require.NoError(t, err)
		assert.Equal(t, "a=b", params.Get("labelSelector"))
		assert.Equal(t, "5", params.Get("resourceVersion"))
	})
	t.Run("JSON with apiVersion and kind decodes into a *Foo", func(t *testing.T) {
		raw := []byte(`{"apiVersion":"samplecontroller.k8s.io/v1alpha1","kind":"Foo",
			"metadata":{"name":"x"},"spec":{"deploymentName":"d","replicas":4},"status":{"availableReplicas":1}}`)
		obj, gvk, err := serializer.NewCodecFactory(scheme).UniversalDeserializer().Decode(raw, nil, nil)
		require.NoError(t, err)
		assert.Equal(t, SchemeGroupVersion.WithKind("Foo"), *gvk)
		foo := obj.(*Foo)
		assert.Equal(t, "d", foo.Spec.DeploymentName)
		assert.Equal(t, int32(4), *foo.Spec.Replicas)
		assert.Equal(t, int32(1), foo.Status.AvailableReplicas)
	})
}

func TestJSONFieldNamesMatchTheCRD(t *testing.T) {
	replicas := int32(3)
	raw, err := json.Marshal(&Foo{Spec: FooSpec{DeploymentName: "d", Replicas: &replicas}, Status: FooStatus{AvailableReplicas: 2}})
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(raw, &got))
	assert.Equal(t, map[string]any{"deploymentName": "d", "replicas": float64(3)}, got["spec"])
	assert.Equal(t, map[string]any{"availableReplicas": float64(2)}, got["status"])
}

func TestResource(t *testing.T) {
	assert.Equal(t, schema.GroupResource{Group: "samplecontroller.k8s.io", Resource: "foos"}, Resource("foos"))
}
