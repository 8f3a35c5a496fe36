// Package cluster is the cluster a long-running example works on — the lab, the
// explorer, the demo — with the faults it can inject: the cluster in $KUBECONFIG
// (kind, say), or, without it, the embedded local control plane (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok with a fake node).
//
// # Where this sits
//
//	example main ─▶ cluster.Start ─▶ Cluster{Watched, Direct}
//	                                   │         └▶ the example's own requests
//	                                   └▶ informers, through a TCP proxy that Cut
//	                                      and Refuse act on, and that FailOver
//	                                      switches to a second apiserver
//
// # Invariants
//
//   - Watched and Direct reach the same apiserver. On the local cluster Watched goes
//     through a proxy, so that cutting "the network" breaks the informers' connections
//     while the example can still create and change objects through Direct.
//   - A fault is injected only into a cluster this process started: on $KUBECONFIG
//     every fault method returns ErrNeedsLocalControlPlane and changes nothing.
//
// # Reading order
//
//  1. cluster.go — Start, Stop, the two configs.
//  2. faults.go — Cut, Refuse, CompactEtcd, RestartAPIServer, and a second apiserver
//     to fail over to (StartSecondAPIServer, FailOver, FailBack).
//  3. testing.go — ForTest, the same cluster for an integration test.
package cluster
