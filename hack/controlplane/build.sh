#!/usr/bin/env bash
# Builds the local control plane — etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl and kwok — from the Go module proxy, at the versions pinned in
# this directory's go.mod files, into a cache directory outside the source tree.
#
#   build.sh          build if needed, then print the directory holding the binaries
#   build.sh --dir    only print that directory (nothing is built; it may not exist yet)
#
# The directory is keyed by a hash of everything that decides the binaries (the go.mod
# and go.sum files, the etcd main, the recipe below and the Go version), so a changed pin
# builds into a new directory and an unchanged one is reused. A build goes into a
# temporary directory that is renamed only when every binary is there, so an
# interrupted build never looks complete.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if ! command -v go >/dev/null 2>&1; then
	echo "build.sh: no Go toolchain on PATH: install Go 1.26 (https://go.dev/dl) first" >&2
	exit 1
fi

# The recipe: the packages and flags of every build.
# Why here, as data: the key hashes these instead of this whole script, so that changing
# only how the script reports (its messages, its progress) does not throw away
# everyone's 10-minute build.
# Pitfall: a flag written into a build command below instead of here would not change
# the key.
kube_pkgs=(
	k8s.io/kubernetes/cmd/kube-apiserver
	k8s.io/kubernetes/cmd/kube-controller-manager
	k8s.io/kubernetes/cmd/kube-scheduler
	k8s.io/kubernetes/cmd/kubectl
)
kube_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	kube_ldflags+=" -X $pkg.gitVersion=v1.36.3 -X $pkg.gitMajor=1 -X $pkg.gitMinor=36 -X $pkg.gitTreeState=clean"
done
etcd_pkg=./etcd
kwok_pkg=sigs.k8s.io/kwok/cmd/kwok
build_flags=(-trimpath)
ldflags="-s -w" # etcd and kwok

key=$(cd "$here" && {
	cat go.mod go.sum kwok/go.mod kwok/go.sum etcd/main.go
	printf '%s\n' "${kube_pkgs[@]}" "$kube_ldflags" "$etcd_pkg" "$kwok_pkg" "${build_flags[@]}" "$ldflags"
	go version
} | sha256sum | cut -c1-16)
root=${KUBEINTERNALS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeinternals}
dir="$root/controlplane-v1.36.3-$key"

if [ "${1:-}" = "--dir" ]; then
	echo "$dir"
	exit 0
fi

if [ -f "$dir/.complete" ]; then
	echo "$dir"
	exit 0
fi

mkdir -p "$root"
tmp=$(mktemp -d "$root/.build-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

start=$(date +%s)

echo "building the control plane into $dir (first time: about 15 minutes on 2 cores)" >&2
(cd "$here" && go build "${build_flags[@]}" -ldflags "$kube_ldflags" -o "$tmp/" "${kube_pkgs[@]}")
echo "  kube-apiserver, kube-controller-manager, kube-scheduler, kubectl: $(($(date +%s) - start))s" >&2
(cd "$here" && go build "${build_flags[@]}" -ldflags "$ldflags" -o "$tmp/etcd" "$etcd_pkg")
echo "  etcd: $(($(date +%s) - start))s" >&2
(cd "$here/kwok" && go build "${build_flags[@]}" -ldflags "$ldflags" -o "$tmp/kwok" "$kwok_pkg")
echo "  kwok: $(($(date +%s) - start))s" >&2

for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok; do
	[ -x "$tmp/$b" ] || { echo "build.sh: $b was not built" >&2; exit 1; }
done
touch "$tmp/.complete"
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
echo "built the control plane in $(($(date +%s) - start))s" >&2
echo "$dir"
