// Package artifacts embeds foo-controller's Kubernetes manifests, so that tests and the
// demo install exactly the files a user applies with kubectl.
//
//	crd.yaml          the Foo CustomResourceDefinition (status subresource, replicas 1..10)
//	example-foo.yaml  a Foo asking for a one-replica Deployment
//	rbac.yaml         Namespace, ServiceAccount, ClusterRole, ClusterRoleBinding
//	deployment.yaml   the controller running in-cluster as that ServiceAccount
//	Dockerfile        the controller's image (build from the repository root)
//
// # Where this sits
//
//	artifacts.CRD() ─▶ crd.InstallCRD ─▶ kube-apiserver serves /apis/samplecontroller.k8s.io/v1alpha1/foos
//	                                      └▶ fooclient, and the Foo informer, can now LIST and WATCH
//
// # Invariants
//
//   - The YAML decodes strictly (no unknown fields) into the Go types it describes, and
//     the ClusterRole grants exactly the verbs the controller uses; artifacts_test.go
//     checks both, so a typo or a missing permission fails a unit test, not a deployment.
//   - The accessors return a fresh copy on every call; nothing here can be modified.
//
// # Reading order
//
// crd.yaml, example-foo.yaml, rbac.yaml, deployment.yaml, Dockerfile, then artifacts.go.
// Apply order for an in-cluster run: crd.yaml, rbac.yaml, deployment.yaml, then
// example-foo.yaml. See ../README.md for the kind walk-through.
//
// # Differences from sample-controller
//
//   - sample-controller ships two CRDs, with and without the status subresource; its
//     controller calls UpdateStatus, which needs the subresource, so we ship only that one.
//   - sample-controller ships no RBAC, Deployment or Dockerfile; running it in-cluster
//     needs all three, so they are here.
package artifacts
