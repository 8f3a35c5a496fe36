// Command benchtable shapes benchstat's comparison of our benchmarks with client-go's
// into the one table `make bench` prints. benchstat does the statistics, except the
// per-round ratio (below): run as
//
//	benchstat -col '/impl@(client-go ours)' -ignore /round -format csv results.txt
//
// it gives, for every benchmark and unit, each side's median over the rounds with a
// 95% confidence interval. benchtable reads that CSV on stdin and prints, per
// package (in-process, then control plane), one Markdown table:
//
//	| benchmark | ours | client-go | time ours ÷ client-go | B/op ÷ | allocs/op ÷ |
//
// The time ratio comes with its range (each median moved to the far ends of its
// interval) and is marked "tie" when that range contains 1.0: the two sides cannot be
// told apart on this machine. Benchmarks whose doc comment has a "Not in the
// headline:" paragraph go into a second table, the other metrics (time to sync, heap)
// into a third, and every benchmark's "Fair:" paragraph is printed below, so each row
// says what the two sides do and why the comparison is fair.
//
// -src names the directories whose _test.go files hold the benchmarks (repeatable).
// -off-headline prints, instead of a table, a go test -bench pattern that matches
// the benchmarks of those directories whose doc says "Not in the headline:" (what
// `make bench`'s quick profile runs with fewer rounds).
// -rounds names the raw results benchstat read (go test's output): with it, each
// table also shows the per-round time ratio, the median of each round's ours ÷
// client-go, which drift of the machine common to a round's two sides does not
// widen (see rounds.go).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

type dirs []string

func (d *dirs) String() string     { return strings.Join(*d, ",") }
func (d *dirs) Set(s string) error { *d = append(*d, s); return nil }

func main() {
	var src dirs
	flag.Var(&src, "src", "a directory of benchmark sources (repeatable)")
	raw := flag.String("rounds", "", "the raw results (go test -bench output), for the per-round ratio")
	offHeadline := flag.Bool("off-headline", false, "print a -bench pattern matching the benchmarks not in the headline, and exit")
	flag.Parse()
	var rounds roundRatios
	if *raw != "" {
		f, err := os.Open(*raw)
		if err == nil {
			rounds, err = parseRounds(f)
			f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchtable:", err)
			os.Exit(1)
		}
	}
	docs := map[string]benchDoc{}
	for _, d := range src {
		found, err := readDocs(d)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchtable:", err)
			os.Exit(1)
		}
		for k, v := range found {
			docs[k] = v
		}
	}
	if *offHeadline {
		fmt.Println(offHeadlinePattern(docs))
		return
	}
	results, err := parseCSV(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	fmt.Print(render(results, docs, rounds))
}
