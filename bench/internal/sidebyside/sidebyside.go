// Package sidebyside runs one workload on our implementation and on client-go's as
// sub-benchmarks that benchstat can compare: Pair names them round=R/impl=ours and
// round=R/impl=client-go and alternates which runs first; Loop adds an untimed
// warm-up op.
package sidebyside

import (
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// RoundsEnv names the environment variable that sets how many rounds each pair runs
// (make bench sets 10: benchstat needs at least 6 samples a side for a 95% confidence
// interval). Unset, a pair runs one round, which is enough to try a benchmark by hand.
const RoundsEnv = "KUBEINTERNALS_BENCH_ROUNDS"

// FewerRoundsEnv and FewerRoundsPatternEnv give some benchmarks fewer rounds than
// RoundsEnv: a benchmark whose top-level name (BenchmarkX of BenchmarkX/sub) matches
// the pattern runs the fewer rounds. make bench's quick profile sets them for the rows
// that are not in the headline.
const (
	FewerRoundsEnv        = "KUBEINTERNALS_BENCH_FEWER_ROUNDS"
	FewerRoundsPatternEnv = "KUBEINTERNALS_BENCH_FEWER_ROUNDS_PATTERN"
)

// Rounds is the number of rounds b runs: from RoundsEnv, or FewerRoundsEnv when b's
// top-level name matches FewerRoundsPatternEnv.
func Rounds(b *testing.B) int {
	n, err := roundsFor(b.Name())
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// roundsFor is Rounds for the benchmark named name.
func roundsFor(name string) (int, error) {
	n, err := roundsFrom(RoundsEnv, 1)
	if err != nil {
		return 0, err
	}
	pattern := os.Getenv(FewerRoundsPatternEnv)
	if pattern == "" {
		return n, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: %v", FewerRoundsPatternEnv, pattern, err)
	}
	top, _, _ := strings.Cut(name, "/")
	if !re.MatchString(top) {
		return n, nil
	}
	return roundsFrom(FewerRoundsEnv, n)
}

// roundsFrom reads a positive number of rounds from env, or def when it is unset.
func roundsFrom(env string, def int) (int, error) {
	s := os.Getenv(env)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a positive number of rounds", env, s)
	}
	return n, nil
}

// Pair runs one workload on both implementations, rounds times, as the
// sub-benchmarks round=R/impl=ours and round=R/impl=client-go. Even rounds run ours
// first, odd rounds client-go first, so neither side always runs on a machine the
// other has just warmed (or just filled with garbage). benchstat pools the rounds
// (-ignore /round) and compares the two columns (-col /impl).
//
// Each side builds what it needs outside the timed loop and then calls Loop.
func Pair(b *testing.B, ours, clientGo func(b *testing.B)) {
	sides := [2]struct {
		name string
		run  func(*testing.B)
	}{{"impl=ours", ours}, {"impl=client-go", clientGo}}
	for r := range Rounds(b) {
		b.Run(fmt.Sprintf("round=%d", r), func(b *testing.B) {
			for i := range sides {
				s := sides[(i+r)%2]
				b.Run(s.name, s.run)
			}
		})
	}
}

// Loop collects garbage, runs op once untimed (a warm-up: first-use costs such as
// growing a map or a pool do not land in the first timed op), then runs it as the
// timed benchmark loop, with allocations reported. Everything before the first
// b.Loop call is outside the timer: b.Loop resets it.
//
// Why collect first: the garbage the previous benchmark (often the other side of
// the pair) left behind would otherwise be collected during this side's timed ops,
// charging one side with the other's work — the outlier rounds that widened some
// rows' intervals to 4× and more.
func Loop(b *testing.B, op func()) {
	b.ReportAllocs()
	runtime.GC()
	op()
	for b.Loop() {
		op()
	}
}
