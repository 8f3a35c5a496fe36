// Package kube holds the chores every example program does before it can talk to a
// cluster: the shared flags (-kubeconfig resolved by the public kubeconfig package),
// a slog logger, SIGINT/SIGTERM turned into a cancelled context, and a REST client for
// one API group version (this module may not use client-go's generated clientset).
//
// # Where this sits
//
//	main() ─▶ kube.AddFlags ─▶ flag.Parse ─▶ Flags.Config (kubeconfig.Load) ─▶ *rest.Config ─▶ REST clients
//	       └▶ Flags.Logger ─▶ *slog.Logger         └▶ SignalContext ─▶ ctx for Run(ctx)
//
// None of this is informer machinery; it is the boilerplate around it, kept in one place
// so that each example's main.go shows only the part it teaches. Finding the cluster is
// not here but in package kubeconfig, because programs outside this repository need it
// too.
//
// # Invariants
//
//   - SignalContext cancels on the first signal and exits the process on the second:
//     the first asks for a graceful stop, the second is the user insisting.
//
// # Reading order
//
//  1. flags.go — the -kubeconfig, -log-level and -log-format flags.
//  2. logging.go — NewLogger.
//  3. signals.go — SignalContext.
//  4. restclient.go — NewRESTClient, a REST client for one API group version.
package kube
