// Package testenv starts and stops a real Kubernetes control plane on loopback for
// tests, benchmarks, `make cluster` and `make demo`: etcd and kube-apiserver (the
// APIServer profile), plus kube-controller-manager, kube-scheduler and kwok with one
// fake node (the Cluster profile), so that a Deployment created through the API gets a
// ReplicaSet, its pods are scheduled and "run" on the fake node, and it becomes
// Available — what kind runs inside its node container, without containers.
//
// The binaries are built from the Go module proxy by hack/controlplane/build.sh into a
// cache directory outside the source tree (`make controlplane`). Without them, Start
// skips the test with the command that builds them, or fails it when
// KUBEINTERNALS_REQUIRE_CONTROLPLANE=1 (as CI sets it), so integration tests cannot skip
// silently there.
//
// Authorization and admission are kind's: RBAC (with Node) decides every request, and the
// default admission chain runs, ServiceAccount and PodSecurity included (the APIServer
// profile turns ServiceAccount admission off: nobody creates the "default"
// ServiceAccounts there). Each component has its own identity: the admin is a
// cluster-admin through kubeadm's binding, kube-controller-manager's controllers act as
// their own ServiceAccounts. docs/local-cluster.md lists every flag against kind's.
//
// Reading order: binaries.go (where the binaries are), process.go (one child process),
// pki.go (the identities, the service-account key and the token file), apiserver.go
// (etcd + kube-apiserver), rbac.go (the bindings made at start-up), cluster.go (the
// Cluster profile), env.go (Start for tests), kubeconfig.go.
//
// Invariant: every process a ControlPlane starts is stopped by Stop — SIGTERM, a bounded
// wait (kube-apiserver's graceful shutdown runs for over 10 s otherwise), then SIGKILL —
// and its temporary directory is removed; Start registers Stop with t.Cleanup, which
// runs also when the test fails or panics. Children also get SIGKILL from the kernel if
// the process that started them dies (Pdeathsig), so a killed `go test` leaves no
// apiserver behind.
package testenv
