// Package controlplanebuild tests hack/controlplane/build.sh, the script behind `make
// controlplane`, by running it with a fake go tool first on PATH: what goes to stdout
// (only the directory, which the Makefile captures), what goes to stderr (the stages and
// their heartbeat) and what goes to the log (the go tool's chatter), on success and on
// failure. It also runs the Makefile's example targets (demo, lab, explore) with that
// fake go, to check that they build the control plane only when the embedded cluster
// will be used (hack/with-cluster.sh), never for a $KUBECONFIG cluster.
//
// Why a package of its own: hack/controlplane is a separate module whose tests `make
// test` does not run, and the script is exercised without building anything.
package controlplanebuild
