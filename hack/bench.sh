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
# Two profiles, and a pattern:
#
#   make bench               the quick profile (the default; about 75 min on 2 cores):
#                            every headline row at 10 rounds a side, each round shorter
#                            (-benchtime QUICK_BENCHTIME in process, QUICK_CP_BENCHTIME
#                            against the control plane); the rows whose doc says "Not in
#                            the headline" at QUICK_OFF_ROUNDS rounds, and the 100k-Pod
#                            JSON decoding sweep not at all (its 10k-ConfigMap sweep, the
#                            same decoder, runs).
#   make bench BENCH=full    the whole run: every row, 10 rounds, 0.5 s and 1 s rounds.
#                            What bench/RESULTS.md publishes.
#   make bench BENCH=regexp  the benchmarks the pattern matches, as the whole run
#                            measures them.
#
# KUBEINTERNALS_BENCH_ROUNDS and BENCHTIME (go test's -benchtime) override every
# profile's rounds and time.
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
case "${BENCH:-}" in
"") profile=quick ;;
full) profile=full ;;
*) profile=pattern ;;
esac
# The quick profile's settings (hack/bench.sh's header says what each does).
QUICK_BENCHTIME=${QUICK_BENCHTIME:-0.2s}
QUICK_CP_BENCHTIME=${QUICK_CP_BENCHTIME:-0.5s}
QUICK_OFF_ROUNDS=${QUICK_OFF_ROUNDS:-6}
inprocess_time=0.5s cp_time=1s
if [ "$profile" = quick ]; then
	inprocess_time=$QUICK_BENCHTIME cp_time=$QUICK_CP_BENCHTIME
	# The off-headline benchmarks, read from their doc comments by benchtable.
	KUBEINTERNALS_BENCH_FEWER_ROUNDS_PATTERN=$(go run ./cmd/benchtable -src . -src controlplane -off-headline)
	export KUBEINTERNALS_BENCH_FEWER_ROUNDS=$QUICK_OFF_ROUNDS KUBEINTERNALS_BENCH_FEWER_ROUNDS_PATTERN
fi
echo "bench: the $profile profile, ${KUBEINTERNALS_BENCH_ROUNDS:-10} rounds a side; raw results in $out" >&2
start=$(date +%s)
started=$(date -u '+%Y-%m-%d %H:%M UTC')
pattern=.
[ "$profile" = pattern ] && pattern=$BENCH
run . "$out/inprocess.txt" 10 "$inprocess_time" "$pattern"
inprocess=$(($(date +%s) - start))
# The control-plane benchmarks run as two processes, each starting its own control
# plane: every row but the 100k-Pod ones, then those (they create the 100,000 Pods).
# Why: before each op quiesce has the kube-apiserver collect its garbage, and a
# collection marks everything the apiserver holds. With the 100,000 Pods in its watch
# cache one took 1.3-1.4 s, without them 80-100 ms, and the 10k rows run thousands
# of ops.
# With BENCH set to a pattern, one process runs the rows it picks.
# The 100k-Pod rows take one op a round at any -benchtime (an op lasts seconds), so
# the quick profile shortens only the other rows' rounds; it leaves out the JSON half
# of the 100k-Pod decoding sweep (22-26 s an op, a quarter of the whole run).
case $profile in
full | quick)
	skip100k=
	[ "$profile" = quick ] && skip100k='WatchListDecoding100kPods/format=json'
	run ./controlplane "$out/controlplane-10k.txt" 10 "$cp_time" . -skip 100kPods
	run ./controlplane "$out/controlplane-100k.txt" 10 1s 100kPods ${skip100k:+-skip "$skip100k"}
	cat "$out/controlplane-10k.txt" "$out/controlplane-100k.txt" > "$out/controlplane.txt"
	;;
pattern)
	run ./controlplane "$out/controlplane.txt" 10 1s "$BENCH"
	;;
esac
took=$(($(date +%s) - start))
cat "$out/inprocess.txt" "$out/controlplane.txt" > "$out/results.txt"
go tool benchstat -col '/impl@(client-go ours)' -ignore /round -format csv "$out/results.txt" > "$out/benchstat.csv" 2> "$out/benchstat-notes.txt"
go run ./cmd/benchtable -src . -src controlplane -rounds "$out/results.txt" < "$out/benchstat.csv" | tee "$out/table.md"

# RESULTS.md: the table with what it was measured on, ready to be copied to
# bench/RESULTS.md when a whole run (BENCH=full) on a quiet machine is published.
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then commit="$commit (with uncommitted changes)"; fi
{
	echo "# make bench: results"
	echo
	case $profile in
	full) echo "One \`make bench BENCH=full\` run, the whole run (rounds a side and -benchtime: ${KUBEINTERNALS_BENCH_ROUNDS:-10}, ${BENCHTIME:-0.5s} in process; ${KUBEINTERNALS_BENCH_ROUNDS:-10}, ${BENCHTIME:-1s} against the control plane)," ;;
	quick) echo "One \`make bench\` run, the quick profile (rounds a side and -benchtime: ${KUBEINTERNALS_BENCH_ROUNDS:-10}, ${BENCHTIME:-$inprocess_time} in process; ${KUBEINTERNALS_BENCH_ROUNDS:-10}, ${BENCHTIME:-$cp_time} against the control plane, 1 s for the 100k-Pod rows; $QUICK_OFF_ROUNDS rounds for the rows not in the headline; WatchListDecoding100kPods/format=json not run)," ;;
	pattern) echo "One \`make bench BENCH='$BENCH'\` run, the rows that pattern picks (rounds a side and -benchtime: ${KUBEINTERNALS_BENCH_ROUNDS:-10}, ${BENCHTIME:-0.5s} in process; ${KUBEINTERNALS_BENCH_ROUNDS:-10}, ${BENCHTIME:-1s} against the control plane)," ;;
	esac
	echo "started $started at commit $commit; it took $((took / 60)) min $((took % 60)) s"
	echo "(in-process $((inprocess / 60)) min, control plane $(((took - inprocess) / 60)) min)."
	echo "Measured against client-go $(go list -m -f '{{.Version}}' k8s.io/client-go) and a control plane built from Kubernetes $(awk '{ for (i = 1; i < NF; i++) if ($i == "k8s.io/kubernetes") { print $(i + 1); exit } }' ../hack/controlplane/go.mod)."
	echo "Machine: $(grep -m1 '^cpu:' "$out/results.txt" | cut -d' ' -f2- | sed 's/ *$//' || true), $(nproc) cores, $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH)."
	echo "How each row is measured, and why each pair is fair: [README.md](README.md) and the"
	echo "\`Fair:\` paragraphs under each table."
	echo
	cat "$out/table.md"
} > "$out/RESULTS.md"
echo "bench: took $((took / 60)) min $((took % 60)) s; table with its header in $out/RESULTS.md" >&2
