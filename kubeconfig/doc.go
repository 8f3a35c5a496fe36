// Package kubeconfig finds the cluster a program should talk to, the way kubectl does,
// and returns it as the *rest.Config every package of this module takes.
//
//	path := flag.String("kubeconfig", "", kubeconfig.FlagUsage)
//	flag.Parse()
//	cfg, from, err := kubeconfig.Load(*path)
//	// cfg goes to informer.NewFactory, listwatch.NewForConfig, or any
//	// client-go client; from says which source won, for a log line.
//
// # Where this sits
//
//	-kubeconfig flag ─┐
//	$KUBECONFIG ──────┼─▶ Load ─▶ *rest.Config ─▶ informer.NewFactory ─▶ reflector … (the pipeline)
//	~/.kube/config ───┤
//	pod's service account (InCluster) ─┘
//
// # Invariants
//
//   - One fixed order, the one kubectl and sample-controller users expect: the path
//     given (a -kubeconfig flag), then $KUBECONFIG (a list, merged like kubectl: the
//     first file that sets a key wins), then ~/.kube/config if it exists, then the
//     in-cluster service account. The Source returned says which one won.
//   - An explicit path that does not exist is an error; a missing ~/.kube/config only
//     means "not configured here, try in-cluster".
//
// # Reading order
//
//  1. load.go — Resolve (a pure function of a Lookup) and Load.
//  2. incluster.go — InCluster, the pod's service account files and variables.
//
// # Differences from client-go
//
//   - clientcmd.BuildConfigFromFlags (what sample-controller calls) tries in-cluster
//     *first* when no flag is given, logs a warning through klog, and then loads no file
//     at all: it never reads $KUBECONFIG or ~/.kube/config. Load reads both, tries
//     in-cluster *last* (so a laptop never picks up stray KUBERNETES_SERVICE_* variables),
//     and returns the choice instead of logging it.
//   - rest.InClusterConfig reads the service account files from a fixed directory;
//     InCluster takes it as a parameter, and Load takes it from
//     $KUBEINTERNALS_SERVICEACCOUNT_DIR when set, so a program can run outside a pod as
//     its ServiceAccount (the examples' RBAC tests do). It also fails at once on a bad CA
//     file, where client-go logs the error and goes on without the CA, and trims the
//     token (`kubectl create token > token` ends it with a newline).
//   - Simplified: no -master and no -context; point $KUBECONFIG or the path at a file
//     whose current-context is the cluster you want (kind writes kind-kind), or change
//     the returned config yourself. Its only dependencies are client-go's rest and
//     tools/clientcmd packages.
package kubeconfig
