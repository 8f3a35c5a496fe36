#!/usr/bin/env bash
# make bench: every side-by-side benchmark in bench/, then one table.
#
# Each pair runs $KUBEINTERNALS_BENCH_ROUNDS rounds (6: the fewest for which benchstat
# gives a 95% confidence interval), alternating which side goes first. The in-process
# benchmarks run first, on a machine with no control plane; the control-plane ones
# (bench/controlplane) start their kube-apiserver and etcd afterwards. benchstat
# (pinned in bench/go.mod as a tool) computes medians, intervals and the comparison;
# bench/cmd/benchtable only shapes that into the table.
#
# BENCH=regexp runs some benchmarks only; BENCHTIME is go test's -benchtime (1s).
set -euo pipefail
cd "$(dirname "$0")/../bench"
out=${BENCH_OUT:-${TMPDIR:-/tmp}/kubeinternals-bench}
mkdir -p "$out"
export KUBEINTERNALS_BENCH_ROUNDS=${KUBEINTERNALS_BENCH_ROUNDS:-6}
run() { # package, output file
	go test -run '^$' -bench "${BENCH:-.}" -benchmem -benchtime "${BENCHTIME:-1s}" -count 1 -timeout 90m "$1" | tee "$2"
}
echo "bench: ${KUBEINTERNALS_BENCH_ROUNDS} rounds a side; raw results in $out" >&2
run . "$out/inprocess.txt"
run ./controlplane "$out/controlplane.txt"
cat "$out/inprocess.txt" "$out/controlplane.txt" > "$out/results.txt"
go tool benchstat -col '/impl@(client-go ours)' -ignore /round -format csv "$out/results.txt" > "$out/benchstat.csv" 2> "$out/benchstat-notes.txt"
go run ./cmd/benchtable -src . -src controlplane < "$out/benchstat.csv" | tee "$out/table.md"
