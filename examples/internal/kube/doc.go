// Package kube holds the chores every example program does before it can talk to a
// cluster: find a kubeconfig, build a slog logger, turn SIGINT/SIGTERM into a cancelled
// context, and build a REST client for one API group version (this module may not use
// client-go's generated clientset).
//
// # Where this sits
//
//	main() ─▶ kube.AddFlags ─▶ flag.Parse ─▶ Flags.Config ─▶ *rest.Config ─▶ REST clients
//	       └▶ Flags.Logger ─▶ *slog.Logger         └▶ SignalContext ─▶ ctx for Run(ctx)
//
// None of this is informer machinery; it is the boilerplate around it, kept in one place
// so that each example's main.go shows only the part it teaches.
//
// # Invariants
//
//   - Kubeconfig resolution has one fixed order, the one kubectl and sample-controller
//     users expect: -kubeconfig flag, then $KUBECONFIG (a list, merged like kubectl),
//     then ~/.kube/config if it exists, then the in-cluster service account. The Source
//     returned says which one won, so a program can log it.
//   - SignalContext cancels on the first signal and exits the process on the second:
//     the first asks for a graceful stop, the second is the user insisting.
//
// # Reading order
//
//  1. kubeconfig.go — Resolve (pure) and LoadConfig.
//  2. flags.go — the -kubeconfig, -log-level and -log-format flags.
//  3. logging.go — NewLogger.
//  4. signals.go — SignalContext.
//  5. restclient.go — NewRESTClient, a REST client for one API group version.
//  6. incluster.go — InClusterConfig, the pod's service account files and variables.
//
// # Differences from client-go
//
//   - clientcmd.BuildConfigFromFlags (what sample-controller calls) tries in-cluster
//     *first* when no flag is given, logs a warning through klog, and then loads no file
//     at all: it never reads $KUBECONFIG or ~/.kube/config. We read both, try in-cluster
//     *last* (so a laptop never picks up stray KUBERNETES_SERVICE_* variables), and
//     return the choice instead of logging it.
//   - rest.InClusterConfig reads the service account files from a fixed directory;
//     InClusterConfig takes it as a parameter, and LoadConfig takes it from
//     $KUBEINTERNALS_SERVICEACCOUNT_DIR when set, so a program can run outside a pod as
//     its ServiceAccount (the examples' RBAC tests do). It also fails at once on a bad CA
//     file, where client-go logs the error and goes on without the CA, and trims the
//     token (`kubectl create token > token` ends it with a newline).
//   - Simplified: no -master flag and no -context flag; point $KUBECONFIG or -kubeconfig
//     at a file whose current-context is the cluster you want (kind writes kind-kind).
package kube
