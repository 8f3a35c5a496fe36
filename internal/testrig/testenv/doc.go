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
// High availability: Env.StartSecondAPIServer starts another kube-apiserver on the
// same etcd, with the same flags, identities and serving certificate, on its own port —
// what every HA control plane runs, each apiserver with its own watch cache at its own
// resourceVersion. Its connection to etcd goes through a Proxy (SecondAPIServer.EtcdLink)
// that Freeze stops: its watch cache then stops advancing while it still answers from
// it, a lagging apiserver for real. A Proxy in front of both, whose Switch moves every
// client from one to the other (cutting the open connections, as a load balancer
// failing over does), lets a test fail a client over to the lagging one.
// TestIntegrationALaggingAPIServer pins what a lagging v1.37 apiserver answers:
//
//   - LIST at resourceVersion "0": its stale cache, at once (200);
//   - LIST at a newer resourceVersion (NotOlderThan, or no match): after 3 s of waiting
//     for the cache, 504 Timeout "Too large resource version", cause
//     ResourceVersionTooLarge, Retry-After: 1 — which client-go's rest client retries,
//     10 times;
//   - LIST at "" (a consistent read): nothing until the request timeout (60 s), then a
//     504 "request did not complete within the allotted timeout" (or a reset stream);
//   - WATCH from a newer resourceVersion: accepted at once, then silent until the cache
//     gets there;
//   - watch-list (sendInitialEvents) from a newer resourceVersion: an ERROR event, 504
//     ResourceVersionTooLarge, after 3 s; at "": no answer, not even headers, until it
//     can reach etcd.
//
// Reading order: binaries.go (where the binaries are), process.go (one child process),
// pki.go (the identities, the service-account key and the token file), apiserver.go
// (etcd + kube-apiserver), crash.go (either killed with SIGKILL and started again),
// rbac.go (the bindings made at start-up), cluster.go (the
// Cluster profile), second_apiserver.go (another apiserver on the same etcd), proxy.go
// (cut, refuse, switch, freeze), env.go (Start for tests), kubeconfig.go.
//
// Invariant: every process a ControlPlane starts (a second apiserver too) is stopped by Stop — SIGTERM, a bounded
// wait (kube-apiserver's graceful shutdown runs for over 10 s otherwise), then SIGKILL —
// and its temporary directory is removed; Start registers Stop with t.Cleanup, which
// runs also when the test fails or panics. Children also get SIGKILL from the kernel if
// the process that started them dies (Pdeathsig), so a killed `go test` leaves no
// apiserver behind.
package testenv
