package main

import (
	"strings"
	"testing"
)

func TestRenderPairsOursWithClientGoAndComputesTheRatio(t *testing.T) {
	in := `goos: linux
BenchmarkQueue/ours-2         	 1000	       90.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkQueue/client-go-2    	 1000	      180.0 ns/op	       8 B/op	       1 allocs/op
BenchmarkSync/n=10k/ours-2    	    1	  5000 ns/op	 12.5 ms-to-synced	 3 allocs/op
BenchmarkSync/n=10k/client-go-2	    1	 10000 ns/op	 25.0 ms-to-synced	 6 allocs/op
PASS`
	pairs, order, err := parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	got := render(pairs, order)
	for _, want := range []string{
		"| Queue | 90 | 180 | 0.50 | 0 | 1 |",
		"| Sync/n=10k | 5000 | 10000 | 0.50 | 3 | 6 |",
		"| Sync/n=10k | ms-to-synced | 12.5 | 25 | 0.50 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing row %q in:\n%s", want, got)
		}
	}
}
