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
