package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Foo asks for a Deployment named Spec.DeploymentName running Spec.Replicas nginx pods,
// and reports in Status how many of them are available.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Foo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FooSpec   `json:"spec"`
	Status FooStatus `json:"status"`
}

// FooSpec is the desired state: which Deployment, and how many replicas.
type FooSpec struct {
	// DeploymentName names the Deployment the controller creates in the Foo's namespace.
	// Pitfall: the CRD does not require it; the controller must reject an empty name
	// with a clear error instead of retrying it forever.
	DeploymentName string `json:"deploymentName"`
	// Replicas is the wanted replica count. The CRD schema bounds it to 1..10.
	// Why a pointer: "unset" (nil) and 0 are different answers, as in apps/v1.
	Replicas *int32 `json:"replicas"`
}

// FooStatus is the observed state, written only through the /status subresource.
type FooStatus struct {
	// AvailableReplicas copies the Deployment's status.availableReplicas.
	AvailableReplicas int32 `json:"availableReplicas"`
}

// FooList is what LIST /apis/samplecontroller.k8s.io/v1alpha1/.../foos returns.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type FooList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`

	Items []Foo `json:"items"`
}
