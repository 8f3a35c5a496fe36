#!/usr/bin/env bash
# Runs a command (make demo, lab, explore) on the cluster the examples will use, and
# builds the local control plane only when that cluster is the embedded one.
#
#   with-cluster.sh CMD [ARGS...]
#
# The examples choose their cluster the same way (examples/internal/cluster.Start):
#   - $KUBECONFIG set: that cluster (kind, say). Nothing is built: the examples never
#     start a binary of the local control plane then.
#   - otherwise: the embedded local control plane. hack/controlplane/build.sh builds it
#     the first time (about 11 minutes on 2 cores; cached after that), and
#     KUBEINTERNALS_CONTROLPLANE_BIN tells the examples where it is. A
#     KUBEINTERNALS_CONTROLPLANE_BIN already set is used as it is.
#
# The choice is printed first, to stderr, before anything slow starts.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ $# -eq 0 ]; then
	echo "usage: with-cluster.sh CMD [ARGS...]" >&2
	exit 2
fi

if [ -n "${KUBECONFIG:-}" ]; then
	echo "with-cluster: using the cluster in \$KUBECONFIG ($KUBECONFIG); the local control plane is not needed, so it is not built (unset KUBECONFIG to use it)" >&2
	exec "$@"
fi

if [ -n "${KUBEINTERNALS_CONTROLPLANE_BIN:-}" ]; then
	echo "with-cluster: no \$KUBECONFIG: using the embedded local control plane in \$KUBEINTERNALS_CONTROLPLANE_BIN ($KUBEINTERNALS_CONTROLPLANE_BIN)" >&2
	exec "$@"
fi

echo "with-cluster: no \$KUBECONFIG: using the embedded local control plane (built once, then cached; set KUBECONFIG to use your own cluster, e.g. kind)" >&2
KUBEINTERNALS_CONTROLPLANE_BIN=$(bash "$here/controlplane/build.sh")
export KUBEINTERNALS_CONTROLPLANE_BIN
exec "$@"
