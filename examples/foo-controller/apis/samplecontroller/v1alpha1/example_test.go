package v1alpha1_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
)

// A cache hands out shared objects: copy before you change one. DeepCopy copies the
// Replicas pointer's target too, so the cached value stays as it was.
func ExampleFoo_DeepCopy() {
	replicas := int32(1)
	cached := &v1alpha1.Foo{
		ObjectMeta: metav1.ObjectMeta{Name: "example-foo"},
		Spec:       v1alpha1.FooSpec{DeploymentName: "example-foo", Replicas: &replicas},
	}
	mine := cached.DeepCopy()
	*mine.Spec.Replicas = 3
	fmt.Println("cached:", *cached.Spec.Replicas, "mine:", *mine.Spec.Replicas)
	// Output:
	// cached: 1 mine: 3
}

// AddToScheme teaches a scheme the kinds of this package; the scheme then answers
// "what kind is this Go value?", which is how events name a Foo whose TypeMeta is empty.
func ExampleAddToScheme() {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		fmt.Println(err)
		return
	}
	gvks, _, err := scheme.ObjectKinds(&v1alpha1.Foo{})
	fmt.Println(gvks, err)
	// Output:
	// [samplecontroller.k8s.io/v1alpha1, Kind=Foo] <nil>
}
