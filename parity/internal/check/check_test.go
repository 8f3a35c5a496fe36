package check

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

type num int

func (n num) String() string { return fmt.Sprint(int(n)) }

// failsWith reports a divergence when ops hold a 3 somewhere after a 7: the property
// Shrink must reduce any failing input to exactly [7 3].
func failsWith(ops []num) error {
	seen7 := false
	for _, op := range ops {
		if op == 7 {
			seen7 = true
		}
		if op == 3 && seen7 {
			return fmt.Errorf("%w: 3 after 7", ErrDiverged)
		}
	}
	return nil
}

func TestShrinkKeepsOnlyTheOperationsTheFailureNeeds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		ops := make([]num, 200)
		for i := range ops {
			ops[i] = num(r.IntN(10))
		}
		if failsWith(ops) == nil {
			continue
		}
		small, err := Shrink(ops, failsWith, nil)
		if !slices.Equal(small, []num{7, 3}) || !errors.Is(err, ErrDiverged) {
			t.Fatalf("shrunk %v to %v (%v), want [7 3]", ops, small, err)
		}
	}
}

func TestShrinkSimplifiesSingleOperations(t *testing.T) {
	// fails when the sum is at least 10; simplify halves a number.
	fails := func(ops []num) error {
		sum := 0
		for _, op := range ops {
			sum += int(op)
		}
		if sum >= 10 {
			return ErrDiverged
		}
		return nil
	}
	half := func(n num) []num {
		if n <= 1 {
			return nil
		}
		return []num{n / 2, n - 1}
	}
	small, _ := Shrink([]num{40, 2, 90, 1}, fails, half)
	if !slices.Equal(small, []num{10}) {
		t.Fatalf("shrunk to %v, want [10]", small)
	}
}

func TestTranscriptsShowTheFirstLineWhereTheyPart(t *testing.T) {
	var a, b Transcript
	for _, l := range []string{"one", "two", "three"} {
		a.Printf("%s", l)
		b.Printf("%s", l)
	}
	if err := Transcripts(&a, &b); err != nil {
		t.Fatalf("equal transcripts: %v", err)
	}
	a.Printf("four")
	b.Printf("FOUR")
	err := Transcripts(&a, &b)
	if !errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), "observation 4") ||
		!strings.Contains(err.Error(), "ours:      four") || !strings.Contains(err.Error(), "client-go: FOUR") {
		t.Fatalf("got %v", err)
	}
	a.Printf("five")
	if err := Transcripts(&a, &b); err == nil {
		t.Fatal("transcripts of different lengths compared equal")
	}
}

func TestSeedsComeFromTheEnvironment(t *testing.T) {
	t.Setenv("PARITY_SEED", "")
	t.Setenv("PARITY_RUNS", "")
	if s, _ := Seeds(3); !slices.Equal(s, []uint64{1, 2, 3}) {
		t.Fatalf("default seeds %v", s)
	}
	t.Setenv("PARITY_RUNS", "2")
	if s, _ := Seeds(3); !slices.Equal(s, []uint64{1, 2}) {
		t.Fatalf("PARITY_RUNS=2 seeds %v", s)
	}
	t.Setenv("PARITY_SEED", "42")
	if s, _ := Seeds(3); !slices.Equal(s, []uint64{42}) {
		t.Fatalf("PARITY_SEED=42 seeds %v", s)
	}
	t.Setenv("PARITY_SEED", "x")
	if _, err := Seeds(3); err == nil {
		t.Fatal("PARITY_SEED=x accepted")
	}
}

func TestReportNamesTheSeedAndHowToReplayIt(t *testing.T) {
	got := Report("TestDeltaFIFO/popped", 17, 120, []num{7, 3}, ErrDiverged)
	for _, want := range []string{"seed 17", "from 120 operations to 2", "  1. 7", "  2. 3", "PARITY_SEED=17 go test -run '^TestDeltaFIFO$'"} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}

// A divergence that does not come back when the input runs again (it depended on how
// goroutines were scheduled) is reported with its first error and the whole input,
// never shrunk against a property that now passes.
func TestADivergenceThatDoesNotRepeatIsReportedAsSuch(t *testing.T) {
	calls := 0
	once := func([]num) error {
		calls++
		if calls == 1 {
			return fmt.Errorf("%w: only the first time", ErrDiverged)
		}
		return nil
	}
	ops := []num{1, 2, 3}
	first := once(ops)
	small, err := Shrink(ops, once, nil)
	if err != nil || !slices.Equal(small, ops) {
		t.Fatalf("Shrink of an input that no longer fails returned %v, %v; want the input and nil", small, err)
	}
	report := ReportUnrepeatable("TestX/sub", 42, ops, first)
	for _, want := range []string{"seed 42 diverged once and not when run again", "    3. 3\n", "only the first time", "PARITY_SEED=42 go test -count=20 -run '^TestX$'"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}
