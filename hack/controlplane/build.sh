#!/usr/bin/env bash
# Builds the local control plane — etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl and kwok — from the Go module proxy, at the versions pinned in
# this directory's go.mod files, into a cache directory outside the source tree.
#
#   build.sh          build if needed, then print the directory holding the binaries
#   build.sh --dir    only print that directory (nothing is built; it may not exist yet)
#
# Stdout carries only that directory (the Makefile captures it); everything a person
# reads goes to stderr.
#
# A first build runs four stages. Each is announced with the time so far and an estimate
# of what is left, and while one runs a heartbeat line says how long it has taken:
#
#   1/4 modules        download the modules the three builds below need
#   2/4 kube binaries  kube-apiserver, kube-controller-manager, kube-scheduler, kubectl
#   3/4 etcd           ./etcd (etcd's server main at the pinned version)
#   4/4 kwok           sigs.k8s.io/kwok/cmd/kwok, from its own module in ./kwok
#
# The go tool's own output (`go: downloading …`, compiler errors) goes to a log file in
# the cache root, build-<key>.log, whose path is printed first; when a stage fails, the
# path and the log's last lines are printed.
#
# The directory is keyed by a hash of everything that decides the binaries (the go.mod
# and go.sum files, the etcd main, the recipe below and the Go version), so a changed pin
# builds into a new directory and an unchanged one is reused. A build goes into a
# temporary directory that is renamed only when every binary is there, so an
# interrupted build never looks complete.
#
# Environment:
#   KUBEINTERNALS_CACHE            the cache root (default ~/.cache/kubeinternals)
#   KUBEINTERNALS_BUILD_HEARTBEAT  seconds between heartbeat lines (default 30)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if ! command -v go >/dev/null 2>&1; then
	echo "build.sh: no Go toolchain on PATH: install Go 1.26 (https://go.dev/dl) first" >&2
	exit 1
fi

# The recipe: the packages and flags of every build.
# Why here, as data: the key hashes these instead of this whole script, so that changing
# only how the script reports (its messages, its progress) does not throw away
# everyone's quarter-hour build.
# Pitfall: a flag written into a build command below instead of here would not change
# the key.
kube_pkgs=(
	k8s.io/kubernetes/cmd/kube-apiserver
	k8s.io/kubernetes/cmd/kube-controller-manager
	k8s.io/kubernetes/cmd/kube-scheduler
	k8s.io/kubernetes/cmd/kubectl
)
# The Kubernetes version is read from go.mod, the one place it is written: the binaries
# report it (kubectl version, /version) and the cache directory is named after it.
kube_version=$(awk '{ for (i = 1; i < NF; i++) if ($i == "k8s.io/kubernetes") { print $(i + 1); exit } }' "$here/go.mod")
if ! [[ $kube_version =~ ^v([0-9]+)\.([0-9]+)\.[0-9]+$ ]]; then
	echo "build.sh: no k8s.io/kubernetes vX.Y.Z in $here/go.mod (found '$kube_version')" >&2
	exit 1
fi
kube_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	kube_ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=${BASH_REMATCH[1]} -X $pkg.gitMinor=${BASH_REMATCH[2]} -X $pkg.gitTreeState=clean"
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
dir="$root/controlplane-$kube_version-$key"

if [ "${1:-}" = "--dir" ]; then
	echo "$dir"
	exit 0
fi

if [ -f "$dir/.complete" ]; then
	echo "$dir"
	exit 0
fi

# Typical durations of the stages of a first build on 2 cores, in seconds: the basis of
# every "about … left". Measured for Kubernetes v1.37.2 alone on the 2-core reference
# machine, with an empty build cache and the modules already downloaded: modules 11s,
# kube binaries 13m21s, etcd 16s, kwok 2m48s, 16m36s in all (the README's figure). An
# empty module cache adds the download, about a minute here.
# Why etcd is quick: the kube binaries have compiled most of its dependencies already.
# Why only estimates: download speed and cores vary; a faster machine simply finishes
# early, a slower one is told it is taking longer than usual.
expect_modules=60
expect_kube=800
expect_etcd=20
expect_kwok=170
heartbeat_every=${KUBEINTERNALS_BUILD_HEARTBEAT:-30}

mkdir -p "$root"
tmp=$(mktemp -d "$root/.build-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log="$root/build-$key.log"
: >"$log"

# dur prints a number of seconds as 45s, 4m or 4m05s.
dur() {
	local m=$(($1 / 60)) s=$(($1 % 60))
	if ((m == 0)); then printf '%ds' "$s"; elif ((s == 0)); then printf '%dm' "$m"; else printf '%dm%02ds' "$m" "$s"; fi
}

# about prints an estimate of seconds, rounded to half minutes above a minute: 4m30s.
about() {
	if (($1 >= 60)); then dur $((($1 + 15) / 30 * 30)); else dur "$(($1 > 0 ? $1 : 0))"; fi
}

# heartbeat NAME EXPECTED START prints a line every $heartbeat_every seconds until its
# stdin reaches end of file.
#
# Why stdin: it is a pipe only this script writes to (see stage), so the heartbeat ends
# when the stage closes it and also when this script exits in any way, killed included
# — a trap cannot cover SIGKILL. No sleep child either (read -t times out instead), so
# nothing is left holding the terminal or a caller's pipe.
# Pitfall: it runs in a process of its own, which must let go of stdout: a caller such
# as the Makefile's $(shell …) reads that pipe until every process holding it exits.
heartbeat() {
	local name=$1 expect=$2 start=$3 took
	exec >/dev/null
	while :; do
		if read -r -t "$heartbeat_every"; then continue; elif (($? <= 128)); then return 0; fi
		took=$((SECONDS - start))
		if ((took < expect)); then
			echo "  $name: $(dur "$took") elapsed, about $(about $((expect - took))) left" >&2
		else
			echo "  $name: $(dur "$took") elapsed, longer than the usual $(about "$expect")" >&2
		fi
	done
}

# stage N NAME WHAT EXPECTED LEFT COMMAND... runs COMMAND with its output in the log,
# announced on stderr with a heartbeat; on failure it prints the log's tail and exits.
stage() {
	local n=$1 name=$2 what=$3 expect=$4 left=$5 start=$SECONDS rc=0 beat
	shift 5
	local sofar=""
	((SECONDS == begin)) || sofar=" $(dur $((SECONDS - begin))) so far,"
	echo "[$n/4] $name ($what): usually ~$(about "$expect");$sofar about $(about "$left") left in all" >&2
	echo "== [$n/4] $name" >>"$log"
	exec {beat}> >(heartbeat "$name" "$expect" "$start")
	local hb=$!
	"$@" >>"$log" 2>&1 {beat}>&- || rc=$?
	exec {beat}>&-
	wait "$hb" || true
	if ((rc != 0)); then
		echo "build.sh: $name failed after $(dur $((SECONDS - start))) (exit status $rc)" >&2
		echo "build.sh: the go tool's output is in $log; its last 40 lines:" >&2
		tail -n 40 "$log" | sed 's/^/    /' >&2
		exit 1
	fi
	echo "  $name: done in $(dur $((SECONDS - start)))" >&2
}

# Why go list -deps and not go mod download: it fetches exactly the modules these
# packages need, while go mod download fetches every module go.mod lists, some of which
# the builds never read (cyphar.com/go-pathrs, for one).
download() {
	in_dir "$here" go list -deps "${kube_pkgs[@]}" "$etcd_pkg" >/dev/null &&
		in_dir "$here/kwok" go list -deps "$kwok_pkg" >/dev/null
}
build_kube() { in_dir "$here" go build "${build_flags[@]}" -ldflags "$kube_ldflags" -o "$tmp/" "${kube_pkgs[@]}"; }
build_etcd() { in_dir "$here" go build "${build_flags[@]}" -ldflags "$ldflags" -o "$tmp/etcd" "$etcd_pkg"; }
build_kwok() { in_dir "$here/kwok" go build "${build_flags[@]}" -ldflags "$ldflags" -o "$tmp/kwok" "$kwok_pkg"; }

# in_dir DIR COMMAND... runs COMMAND in DIR, first writing it to stderr (the log), so
# that a failure can be reproduced by hand.
in_dir() {
	local d=$1
	shift
	echo "+ cd $d && $*" >&2
	(cd "$d" && "$@")
}

begin=$SECONDS
total=$((expect_modules + expect_kube + expect_etcd + expect_kwok))
echo "build.sh: building the control plane into $dir" >&2
echo "build.sh: a first build takes about $(about "$total") on 2 cores; the go tool's output goes to $log" >&2
stage 1 modules "downloading what the builds need" "$expect_modules" "$total" download
kube_names=$(printf '%s, ' "${kube_pkgs[@]##*/}")
stage 2 "kube binaries" "${kube_names%, }" "$expect_kube" $((total - expect_modules)) build_kube
stage 3 etcd "$etcd_pkg" "$expect_etcd" $((expect_etcd + expect_kwok)) build_etcd
stage 4 kwok "$kwok_pkg" "$expect_kwok" "$expect_kwok" build_kwok

for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok; do
	[ -x "$tmp/$b" ] || { echo "build.sh: $b was not built" >&2; exit 1; }
done
touch "$tmp/.complete"
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
echo "build.sh: built the control plane in $(dur $((SECONDS - begin)))" >&2
echo "$dir"
