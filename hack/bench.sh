#!/usr/bin/env bash
# make bench: every side-by-side benchmark in bench/, then one table.
#
# Each pair runs 10 rounds a side, alternating which side goes first: rounds of 0.5s
# for the in-process benchmarks, of 1s for the control-plane ones (bench/controlplane),
# whose ops take seconds. Why 10: with 6 samples benchstat's 95% confidence interval of
# a median is the whole range, so one disturbed round decides it; with 10 it runs from
# the 2nd to the 9th sample. (A 100k-Pod sync is one op a round, and about one in
# twelve was disturbed: with 6 rounds such a row's client-CPU interval was 0.21–1.05.) The in-process benchmarks run
# first, on a machine with no control plane; the control-plane ones start their
# kube-apiserver and etcd afterwards. benchstat (pinned in bench/go.mod as a tool)
# computes medians, intervals and the comparison; bench/cmd/benchtable shapes that
# into the table and adds one statistic of its own from the raw results, the
# per-round time ratio (bench/cmd/benchtable/rounds.go).
#
# BENCH=regexp runs some benchmarks only. KUBEINTERNALS_BENCH_ROUNDS and BENCHTIME
# (go test's -benchtime) override both packages' rounds and time.
set -euo pipefail
cd "$(dirname "$0")/../bench"
out=${BENCH_OUT:-${TMPDIR:-/tmp}/kubeinternals-bench}
mkdir -p "$out"
run() { # package, output file, rounds, benchtime, -bench regexp, then extra go test flags
	local pkg=$1 file=$2 rounds=$3 benchtime=$4 pattern=$5
	shift 5
	KUBEINTERNALS_BENCH_ROUNDS=${KUBEINTERNALS_BENCH_ROUNDS:-$rounds} \
		go test -run '^$' -bench "$pattern" "$@" -benchmem -benchtime "${BENCHTIME:-$benchtime}" -count 1 -timeout 120m "$pkg" | tee "$file"
}
echo "bench: ${KUBEINTERNALS_BENCH_ROUNDS:-10} rounds a side; raw results in $out" >&2
start=$(date +%s)
started=$(date -u '+%Y-%m-%d %H:%M UTC')
run . "$out/inprocess.txt" 10 0.5s "${BENCH:-.}"
inprocess=$(($(date +%s) - start))
# The control-plane benchmarks run as two processes, each starting its own control
# plane: every row but the 100k-Pod ones, then those (they create the 100,000 Pods).
# Why: before each op quiesce has the kube-apiserver collect its garbage, and a
# collection marks everything the apiserver holds. With the 100,000 Pods in its watch
# cache one took 1.3-1.4 s, without them 80-100 ms, and the 10k rows run thousands
# of ops.
# With BENCH set, one process runs the rows it picks.
if [ -z "${BENCH:-}" ]; then
	run ./controlplane "$out/controlplane-10k.txt" 10 1s . -skip 100kPods
	run ./controlplane "$out/controlplane-100k.txt" 10 1s 100kPods
	cat "$out/controlplane-10k.txt" "$out/controlplane-100k.txt" > "$out/controlplane.txt"
else
	run ./controlplane "$out/controlplane.txt" 10 1s "$BENCH"
fi
took=$(($(date +%s) - start))
cat "$out/inprocess.txt" "$out/controlplane.txt" > "$out/results.txt"
go tool benchstat -col '/impl@(client-go ours)' -ignore /round -format csv "$out/results.txt" > "$out/benchstat.csv" 2> "$out/benchstat-notes.txt"
go run ./cmd/benchtable -src . -src controlplane -rounds "$out/results.txt" < "$out/benchstat.csv" | tee "$out/table.md"

# RESULTS.md: the table with what it was measured on, ready to be copied to
# bench/RESULTS.md when a whole run (no BENCH=) on a quiet machine is published.
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then commit="$commit (with uncommitted changes)"; fi
{
	echo "# make bench: results"
	echo
	echo "One \`make bench\` run (BENCH=${BENCH:-all}; rounds a side and -benchtime: ${KUBEINTERNALS_BENCH_ROUNDS:-10}, ${BENCHTIME:-0.5s} in process; ${KUBEINTERNALS_BENCH_ROUNDS:-10}, ${BENCHTIME:-1s} against the control plane),"
	echo "started $started at commit $commit; it took $((took / 60)) min $((took % 60)) s"
	echo "(in-process $((inprocess / 60)) min, control plane $(((took - inprocess) / 60)) min)."
	echo "Measured against client-go $(go list -m -f '{{.Version}}' k8s.io/client-go) and a control plane built from Kubernetes $(awk '{ for (i = 1; i < NF; i++) if ($i == "k8s.io/kubernetes") { print $(i + 1); exit } }' ../hack/controlplane/go.mod)."
	echo "Machine: $(grep -m1 '^cpu:' "$out/inprocess.txt" | cut -d' ' -f2- | sed 's/ *$//' || true), $(nproc) cores, $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH)."
	echo "How each row is measured, and why each pair is fair: [README.md](README.md) and the"
	echo "\`Fair:\` paragraphs under each table."
	echo
	cat "$out/table.md"
} > "$out/RESULTS.md"
echo "bench: took $((took / 60)) min $((took % 60)) s; table with its header in $out/RESULTS.md" >&2
