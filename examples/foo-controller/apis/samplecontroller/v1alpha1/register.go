package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of Foo. It ends in .k8s.io, which is why the CRD carries the
// api-approved.kubernetes.io annotation (KEP-2337).
const GroupName = "samplecontroller.k8s.io"

// SchemeGroupVersion is the group and version the types of this package are served at.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// Resource turns an unqualified resource name ("foos") into a group-qualified one, for
// building API errors such as NotFound.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

// AddToScheme registers Foo and FooList, and the meta/v1 types every API group needs, in
// a scheme.
//
// Why a plain function and not sample-controller's package-level SchemeBuilder variable:
// the caller owns the scheme, and this package keeps no mutable state of its own.
func AddToScheme(scheme *runtime.Scheme) error {
	return addKnownTypes(scheme)
}

// addKnownTypes maps the Go types to their kinds in SchemeGroupVersion.
//
// Why metav1.AddToGroupVersion: it registers ListOptions, GetOptions, DeleteOptions,
// WatchEvent and Status for this group version (and Status for the unversioned v1), so a
// REST client built on the scheme can encode options as query parameters and decode the
// Status body of an error reply into an *apierrors.StatusError.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &Foo{}, &FooList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
