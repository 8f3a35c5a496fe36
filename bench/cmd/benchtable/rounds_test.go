package main

import (
	"os"
	"strings"
	"testing"
)

// A machine that runs the first five rounds at half speed slows both sides of those
// rounds. benchstat, comparing the two sides as independent samples, cannot tell
// them apart; the ratio within each round is 0.50 throughout, and the per-round
// column says so.
func TestThePerRoundRatioCancelsDriftThatBothSidesOfARoundShare(t *testing.T) {
	f, err := os.Open("testdata/drift.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rounds, err := parseRounds(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(rounds["example.com/bench\x00Drift/n=1k"]); got != 10 {
		t.Fatalf("%d per-round ratios for Drift/n=1k, want 10 (one per round); parsed %v", got, rounds)
	}
	got := renderedTable(t, "testdata/drift.txt", map[string]benchDoc{}, rounds)
	mustContain(t, got,
		"| benchmark | ours | client-go | time ratio (range) | per-round time ratio (range) | ours B/op |",
		"| Drift/n=1k | 151 ns ±34% | 301 ns ±34% | 0.50 (0.25–1.02) tie | 0.50 (0.50–0.50) | 800 |",
		"from the 2nd to the 9th ratio",
	)
	if without := renderedTable(t, "testdata/drift.txt", map[string]benchDoc{}, nil); strings.Contains(without, "per-round") {
		t.Error("without the raw results the table has a per-round column")
	}
}

// The interval of a median from n samples: the k-th smallest to the k-th largest,
// for the largest k that still covers the median with 95% confidence.
func TestMedianIntervalIsTheOrderStatisticsThatCover95Percent(t *testing.T) {
	ten := []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}
	if m, lo, hi, ok := medianInterval(ten); !ok || m != 5.5 || lo != 2 || hi != 9 {
		t.Errorf("10 samples: median %v, interval %v–%v (ok %v); want 5.5, 2–9", m, lo, hi, ok)
	}
	six := []float64{6, 5, 4, 3, 2, 1}
	if m, lo, hi, ok := medianInterval(six); !ok || m != 3.5 || lo != 1 || hi != 6 {
		t.Errorf("6 samples: median %v, interval %v–%v (ok %v); want 3.5, 1–6", m, lo, hi, ok)
	}
	if _, _, _, ok := medianInterval([]float64{1, 2, 3, 4, 5}); ok {
		t.Error("5 samples gave an interval; none covers 95% (min–max covers 93.75%)")
	}
	if got := perRound([]float64{1, 2, 3}); got != "–" {
		t.Errorf("perRound of 3 samples = %q, want –", got)
	}
}

func TestSplitRoundTakesOutTheRoundAndTheSide(t *testing.T) {
	name, round, impl := splitRound("InformerReadsDuringUpdates/n=10k/readers=8/round=3/impl=client-go")
	if name != "InformerReadsDuringUpdates/n=10k/readers=8" || round != "3" || impl != "client-go" {
		t.Errorf("got %q, %q, %q", name, round, impl)
	}
	if _, round, _ := splitRound("Plain"); round != "" {
		t.Errorf("a name without round= gave round %q", round)
	}
}
