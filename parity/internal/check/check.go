// Package check runs a differential property over generated inputs: the same sequence
// of operations is given to this module and to client-go, each side writes down what it
// observed, and the two transcripts must be equal.
//
// Inputs come from a seeded generator, so a failure is a seed. When one fails, Run
// shrinks it — drops operations, and simplifies single ones where the test says how —
// until every remaining operation is needed to show the divergence, and reports the
// seed, the shortest input and the first line where the transcripts part. The seed
// replays it: PARITY_SEED=<seed> runs only that seed.
//
// Environment (read by Run):
//
//	PARITY_SEED  one seed to run (a number), or "time" for one seed from the clock
//	PARITY_RUNS  how many seeds a test runs, from seed 1 up (default: the test's own)
package check

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Config is what a test chooses for itself; the environment overrides it.
type Config[O fmt.Stringer] struct {
	// Runs is the number of seeds (1, 2, … Runs) checked when PARITY_SEED is unset.
	Runs int
	// Simplify, when set, returns simpler versions of one operation (fewer objects in a
	// list, a smaller delay), tried in order after no operation can be dropped.
	Simplify func(O) []O
}

// Generator makes one input from a seeded source.
type Generator[O fmt.Stringer] func(r *rand.Rand) []O

// Property runs ops on both libraries and returns nil if every observation agreed, or
// an error saying where they parted (Transcripts builds one).
type Property[O fmt.Stringer] func(ops []O) error

// Run checks prop on the seeds the environment or cfg names, and fails t with the
// shrunk input of the first seed that diverges.
func Run[O fmt.Stringer](t *testing.T, cfg Config[O], gen Generator[O], prop Property[O]) {
	t.Helper()
	seeds, err := Seeds(cfg.Runs)
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range seeds {
		ops := gen(rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)))
		first := safely(prop, ops)
		if first == nil {
			continue
		}
		small, last := Shrink(ops, func(ops []O) error { return safely(prop, ops) }, cfg.Simplify)
		if last == nil {
			t.Fatal(ReportUnrepeatable(t.Name(), seed, ops, first))
		}
		t.Fatal(Report(t.Name(), seed, len(ops), small, last))
	}
}

// Seeds returns the seeds to run: PARITY_SEED's one, or 1…runs (PARITY_RUNS overrides runs).
func Seeds(runs int) ([]uint64, error) {
	switch s := os.Getenv("PARITY_SEED"); {
	case s == "time":
		return []uint64{uint64(time.Now().UnixNano())}, nil
	case s != "":
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("PARITY_SEED=%q: want a number or \"time\": %w", s, err)
		}
		return []uint64{seed}, nil
	}
	if s := os.Getenv("PARITY_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("PARITY_RUNS=%q: want a positive number", s)
		}
		runs = n
	}
	if runs < 1 {
		runs = 1
	}
	seeds := make([]uint64, runs)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	return seeds, nil
}

// Report formats a divergence: the seed and how to replay it, the shrunk input, and
// the error the shrunk input produced.
func Report[O fmt.Stringer](test string, seed uint64, generated int, ops []O, err error) string {
	return report(fmt.Sprintf("seed %d diverged; shrunk from %d operations to %d", seed, generated, len(ops)),
		ops, err, fmt.Sprintf("replay: cd parity && PARITY_SEED=%d go test -run '^%s$' ./...", seed, topTest(test)))
}

// ReportUnrepeatable describes a seed whose input diverged once and not when it was run
// again: the difference depends on how goroutines were scheduled, not on the input
// alone. It prints the whole input and the first run's divergence; the replay command
// may need PARITY_RUNS or a loaded machine to show it again.
func ReportUnrepeatable[O fmt.Stringer](test string, seed uint64, ops []O, err error) string {
	return report(fmt.Sprintf("seed %d diverged once and not when run again (a difference that depends on scheduling); its %d operations", seed, len(ops)),
		ops, err, fmt.Sprintf("replay (it may pass): cd parity && PARITY_SEED=%d go test -count=20 -run '^%s$' ./...", seed, topTest(test)))
}

// report is "parity: <head>:", the numbered operations, err, and the replay line.
func report[O fmt.Stringer](head string, ops []O, err error, replay string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "parity: %s:\n", head)
	for i, op := range ops {
		fmt.Fprintf(&b, "  %3d. %s\n", i+1, op)
	}
	fmt.Fprintf(&b, "%v\n%s", err, replay)
	return b.String()
}

// topTest is the top-level test of a (sub)test's name: what -run can select.
func topTest(name string) string {
	top, _, _ := strings.Cut(name, "/")
	return top
}

// safely runs prop, turning a panic on either side into an error: client-go panics on
// some inputs (an index function's error), and that is a divergence to report, not a
// crash of the suite.
func safely[O fmt.Stringer](prop Property[O], ops []O) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return prop(ops)
}

// ErrDiverged is wrapped by every error Transcripts returns.
var ErrDiverged = errors.New("the libraries diverged")
