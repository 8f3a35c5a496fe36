package controller

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The Deployment a Foo asks for, and how a Deployment event finds its way back to the
// Foo that owns it.
func Example_newDeployment() {
	foo := testFoo(ptr.To[int32](2))
	d := newDeployment(foo)
	fmt.Println(d.Namespace+"/"+d.Name, *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image)
	ref := metav1.GetControllerOf(d)
	fmt.Println(ref.APIVersion, ref.Kind, ref.Name, *ref.Controller)
	key, ok := ownerFoo(d)
	fmt.Println(key, ok)
	// Output:
	// team-a/web-dep 2 nginx:latest
	// samplecontroller.k8s.io/v1alpha1 Foo web true
	// team-a/web true
}
