package sidebyside

import (
	"flag"
	"testing"
)

// fewOps makes testing.Benchmark run 10 ops instead of a second's worth.
func fewOps(t *testing.T) {
	f := flag.Lookup("test.benchtime")
	old := f.Value.String()
	if err := f.Value.Set("10x"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Value.Set(old) })
}

func TestPairAlternatesWhichSideRunsFirstAndLoopWarmsUpUntimed(t *testing.T) {
	t.Setenv(RoundsEnv, "4")
	fewOps(t)
	var order []string
	var ops, timedOps int
	testing.Benchmark(func(b *testing.B) {
		Pair(b, func(b *testing.B) {
			order = append(order, "ours")
			first := true
			Loop(b, func() {
				ops++
				if !first {
					timedOps++
				}
				first = false
			})
			if b.N != timedOps {
				t.Errorf("b.N = %d after %d timed ops", b.N, timedOps)
			}
			timedOps = 0
		}, func(b *testing.B) {
			order = append(order, "client-go")
			Loop(b, func() {})
		})
	})
	want := []string{"ours", "client-go", "client-go", "ours", "ours", "client-go", "client-go", "ours"}
	if len(order) != len(want) {
		t.Fatalf("sides ran in order %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("sides ran in order %v, want %v", order, want)
		}
	}
	if ops == 0 {
		t.Fatal("the ours side never ran an op")
	}
}

func TestRoundsRefusesANonsenseValue(t *testing.T) {
	t.Setenv(RoundsEnv, "zero")
	failed := false
	testing.Benchmark(func(b *testing.B) {
		defer func() { failed = b.Failed() }()
		Rounds(b)
	})
	if !failed {
		t.Fatal("Rounds accepted a value that is not a positive number")
	}
}

// The quick profile's fewer rounds apply to the benchmarks whose top-level name
// matches the pattern, sub-benchmarks included, and to no other.
func TestFewerRoundsForTheBenchmarksThePatternNames(t *testing.T) {
	t.Setenv(RoundsEnv, "10")
	t.Setenv(FewerRoundsEnv, "6")
	t.Setenv(FewerRoundsPatternEnv, "^(BenchmarkOff|BenchmarkAlsoOff)$")
	for name, want := range map[string]int{
		"BenchmarkOff":                     6,
		"BenchmarkOff/format=json/round=3": 6,
		"BenchmarkAlsoOff":                 6,
		"BenchmarkOn":                      10,
		"BenchmarkOffAndOn":                10,
		"BenchmarkOn/BenchmarkOff":         10,
	} {
		got, err := roundsFor(name)
		if err != nil || got != want {
			t.Errorf("roundsFor(%q) = %d, %v; want %d", name, got, err, want)
		}
	}
	t.Setenv(FewerRoundsPatternEnv, "(")
	if _, err := roundsFor("BenchmarkOff"); err == nil {
		t.Error("a pattern that does not compile was accepted")
	}
	t.Setenv(FewerRoundsPatternEnv, "^BenchmarkOff$")
	t.Setenv(FewerRoundsEnv, "")
	if got, _ := roundsFor("BenchmarkOff"); got != 10 {
		t.Errorf("with no fewer rounds set, %d rounds, want RoundsEnv's 10", got)
	}
}
