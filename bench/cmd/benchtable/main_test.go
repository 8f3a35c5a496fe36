package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// renderedTable is the table benchtable prints for the raw results in file
// (testdata/results.txt: six rounds a side of three benchmarks, in go test's output
// format, with the round=/impl= names sidebyside.Pair gives), logged for the reader.
func renderedTable(t *testing.T, file string, docs map[string]benchDoc, rounds roundRatios) string {
	t.Helper()
	results, err := parseCSV(strings.NewReader(benchstatCSVOf(t, file)))
	if err != nil {
		t.Fatal(err)
	}
	got := render(results, docs, rounds)
	t.Logf("table:\n%s", got)
	return got
}

// benchstatCSVOf runs the benchstat this module pins (go tool benchstat) the way
// `make bench` does, on the raw results in file.
func benchstatCSVOf(t *testing.T, results string) string {
	t.Helper()
	cmd := exec.Command("go", "tool", "benchstat", "-col", "/impl@(client-go ours)", "-ignore", "/round", "-format", "csv", results)
	cmd.Stderr = nil // benchstat's notes ("all samples are equal") go to stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool benchstat: %v", err)
	}
	return string(out)
}

func TestTheTableFromBenchstatsComparison(t *testing.T) {
	docs, err := readDocs("testdata/src")
	if err != nil {
		t.Fatal(err)
	}
	got := renderedTable(t, "testdata/results.txt", docs, nil)
	headline, rest, _ := strings.Cut(got, "Not in the headline")
	for _, want := range []string{
		"Medians of 6 rounds a side",
		// 100 ns ±2% against 200.5 ns ±2%: 0.50 with a range that excludes 1.
		"| Fast | 100 ns ±2% | 201 ns ±2% | 0.50 (0.48–0.52) | 800 | 1000 | 0.80 | 0.80 |",
		// Within each other's interval: a tie.
		"| Same | 100 ns ±5% | 100 ns ±3% | 1.00 (0.92–1.08) tie | 800 | 1000 | 0.80 | 0.80 |",
	} {
		if !strings.Contains(headline, want) {
			t.Errorf("the headline lacks %q", want)
		}
	}
	if strings.Contains(headline, "| OffHeadline |") {
		t.Error("a row whose doc says it is not in the headline is in the headline table")
	}
	for _, want := range []string{
		"| OffHeadline | 50 ns ±4% | 100 ns ±2% | 0.50",
		"| Fast | ms/synced | 10 ±2% | 20.05 ±2% | 0.50 |",
		"- **Fast**: both sides do the same thing.",
		"- **OffHeadline**: the same code on both sides. Not in the headline: it runs client-go's code on both sides.",
	} {
		if !strings.Contains(rest, want) {
			t.Errorf("below the headline, missing %q", want)
		}
	}
}

func TestParseCSVRejectsATableItCannotRead(t *testing.T) {
	_, err := parseCSV(strings.NewReader(",client-go,,ours,,,\n,sec/op,CI\n"))
	if err == nil || !strings.Contains(err.Error(), "columns") {
		t.Fatalf("err = %v, want one naming the column count", err)
	}
	_, err = parseCSV(strings.NewReader(",client-go,,ours,,,\n,sec/op,CI,sec/op,CI,vs base,P\nX-2,fast,1%,1,1%,~,n=6\n"))
	if err == nil || !strings.Contains(err.Error(), "X sec/op") {
		t.Fatalf("err = %v, want one naming the row and unit", err)
	}
}

// Every benchmark `make bench` runs must say, in its doc comment, what the two sides
// do and why the comparison is fair: the table prints it under every row.
func TestEveryBenchmarkSaysWhyItIsFair(t *testing.T) {
	for _, dir := range []string{"../..", "../../controlplane"} {
		docs, err := readDocs(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(docs) == 0 {
			t.Fatalf("%s: no benchmarks found", dir)
		}
		for name, d := range docs {
			if d.Fair == "" {
				t.Errorf("%s: Benchmark%s has no \"Fair:\" paragraph in its doc comment", dir, name)
			}
		}
	}
}

// Rows that report the client's CPU and peak heap (the control-plane rows) get them
// in the main table, each ratio with its range; a CPU range reaching beyond
// [median×0.67, median×1.5] is flagged as too wide to decide.
func TestControlPlaneRowsShowTheClientsCPUAndPeakHeapWithRanges(t *testing.T) {
	got := renderedTable(t, "testdata/clientcost.txt", map[string]benchDoc{}, nil)
	mustContain(t, got,
		"| benchmark | ours | client-go | time ratio (range) | client CPU ours | client CPU ratio (range) | peak heap ours | peak heap ratio (range) | B/op ratio | allocs/op ratio |",
		// CPU 50 ms ±4% against 100 ms ±2%: 0.50, decided; the heap peak 40M against 50M.
		"| ClientSteady | 425 ms ±29% | 210 ms ±48% | 2.02 (0.97–5.02) tie | 50 ms ±4% | 0.50 (0.47–0.53) | 40MB ±0% | 0.80 (0.80–0.80) | 0.80 | 0.80 |",
		"| ClientNoisy | 425 ms ±29% | 210 ms ±48% | 2.02 (0.97–5.02) tie | 55 ms ±82% | 0.55 (0.10–1.02) tie **wide** |",
	)
	if strings.Contains(got, "| ClientSteady | cpu-ms/op |") || strings.Contains(got, "| ClientSteady | B-heap-peak |") {
		t.Error("CPU and peak heap are in the main table, not repeated under Other metrics")
	}
	if !strings.Contains(got, "| ClientSteady | B-live-after |") {
		t.Error("the other custom metrics are still listed")
	}
}

// mustContain reports every one of wants that the table got lacks.
func mustContain(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q", want)
		}
	}
}

// "Not in the headline:" counts where a doc writes it at the end of its "Fair:"
// paragraph too (BenchmarkWatchListDecoding100kPods does), not only as a paragraph of
// its own.
func TestNotInTheHeadlineCountsAtTheEndOfTheFairParagraph(t *testing.T) {
	d := parseDoc("BenchmarkX: a sweep.\n\nFair: the same sync on both sides. Not in the headline: one option\nof ours swept.\n")
	if d.Fair != "the same sync on both sides." {
		t.Errorf("Fair = %q", d.Fair)
	}
	if d.OffHeadline != "one option of ours swept." {
		t.Errorf("OffHeadline = %q", d.OffHeadline)
	}
	own := parseDoc("Fair: like with like.\n\nNot in the headline: a sanity check.\n")
	if own.Fair != "like with like." || own.OffHeadline != "a sanity check." {
		t.Errorf("paragraphs of their own: %+v", own)
	}
}

// The quick profile's pattern matches exactly the off-headline benchmarks.
func TestOffHeadlinePatternMatchesExactlyTheOffHeadlineBenchmarks(t *testing.T) {
	docs, err := readDocs("testdata/src")
	if err != nil {
		t.Fatal(err)
	}
	pattern := offHeadlinePattern(docs)
	re, err := regexp.Compile(pattern)
	if err != nil {
		t.Fatalf("%q: %v", pattern, err)
	}
	for name, d := range docs {
		if got, want := re.MatchString("Benchmark"+name), d.OffHeadline != ""; got != want {
			t.Errorf("%q matches Benchmark%s: %v, want %v", pattern, name, got, want)
		}
	}
	if !re.MatchString("BenchmarkOffHeadline") || re.MatchString("BenchmarkOffHeadlineToo") {
		t.Errorf("%q: want a whole-name match of BenchmarkOffHeadline", pattern)
	}
	if p := offHeadlinePattern(nil); regexp.MustCompile(p).MatchString("BenchmarkX") {
		t.Errorf("with none off the headline, %q matches a benchmark", p)
	}
}
