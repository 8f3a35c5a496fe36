// Package crd installs CustomResourceDefinitions from YAML and waits until the API server
// serves them, for the examples' tests and the demo.
//
// # Where this sits
//
//	crd.yaml ─▶ InstallCRD ─ server-side apply ─▶ kube-apiserver (apiextensions)
//	                └─ poll GET until Established ─▶ return ─▶ fooclient / informers may start
//
// # Invariants
//
//   - InstallCRD returns nil only after every CRD in the manifest has the condition
//     Established=True: from then on LIST/WATCH of the new resource work. Starting an
//     informer earlier makes its first watch-list (and the LIST it falls back to)
//     fail with 404, and its cache never syncs until the reflector retries.
//   - Installing is idempotent: it uses server-side apply, so running it twice, or on a
//     cluster that already has the CRD, updates in place instead of failing with
//     AlreadyExists.
//   - It never decodes CRDs into Go types: this module does not depend on
//     k8s.io/apiextensions-apiserver. The manifest is sent as the user wrote it and only
//     status.conditions is read back.
//
// # Reading order
//
//  1. install.go — InstallCRD, InstallCRDFile, parsing, apply.
//  2. wait.go — waiting for Established and reading conditions.
//
// # Differences from client-go
//
// client-go has no such helper (envtest in controller-runtime does the same job with the
// apiextensions clientset). Simplified: no uninstall; tests get a fresh control plane.
package crd
