package indexer

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Object is what every cache in this module holds: a Kubernetes API object, which has
// both a kind (runtime.Object) and object metadata (metav1.Object). Typed objects such
// as *corev1.ConfigMap satisfy it, and so does *unstructured.Unstructured, which is how
// a CRD without generated Go types is cached.
//
// Why: client-go stores interface{} and makes every reader type-assert. Naming the
// object type as a type parameter constrained to Object moves that assertion into the
// compiler, which is the project's first design decision: no obj.(metav1.Object) in
// user code.
type Object interface {
	runtime.Object
	metav1.Object
}
