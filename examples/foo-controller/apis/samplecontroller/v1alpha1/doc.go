// Package v1alpha1 holds the Go types of the samplecontroller.k8s.io/v1alpha1 API: the
// Foo custom resource that foo-controller reconciles into a Deployment.
//
// The types mirror k8s.io/sample-controller's pkg/apis/samplecontroller/v1alpha1 field for
// field, so the CRD in ../../../artifacts/crd.yaml, the JSON on the wire and this Go code
// all describe the same object.
//
// # Where this sits in the pipeline
//
//	kube-apiserver ─JSON─▶ fooclient (rest.RESTClient + this package's Scheme) ─▶ *Foo
//	                       └── reflector / informer (later issue) cache *Foo values
//
// This package is the "schema" half: types, their DeepCopy methods, and AddToScheme. It
// talks to nothing.
//
// # Invariants
//
//   - Every type that a cache stores implements runtime.Object, so it has a DeepCopyObject
//     method. Those methods are generated, never hand-written: a hand-written DeepCopy
//     that forgets a pointer field (Replicas) would let two cache readers share memory.
//   - The Scheme knows Foo and FooList under SchemeGroupVersion, plus the meta/v1 option
//     and Status types (metav1.AddToGroupVersion), so a REST client built on it can encode
//     ListOptions as query parameters and decode error Status bodies.
//
// # Reading order
//
//  1. types.go — Foo, FooSpec, FooStatus, FooList.
//  2. register.go — SchemeGroupVersion, AddToScheme, Resource.
//  3. zz_generated.deepcopy.go — generated; read once to see what "deep" means.
//
// # Regenerating DeepCopy
//
// From this directory run `go generate .`; the exact command is the go:generate line
// below. It needs network access (or a module cache holding code-generator v0.37.2).
//
// # Differences from client-go / sample-controller
//
//   - Simplified: no +genclient tag and no generated clientset, informers, listers or
//     apply configurations. The typed client is the hand-written ../../../fooclient on
//     rest.RESTClient, and informers come from this module's informer package.
//
// +k8s:deepcopy-gen=package
// +groupName=samplecontroller.k8s.io
package v1alpha1

//go:generate go run k8s.io/code-generator/cmd/deepcopy-gen@v0.37.2 --output-file zz_generated.deepcopy.go --go-header-file ../../../hack/boilerplate.go.txt .
