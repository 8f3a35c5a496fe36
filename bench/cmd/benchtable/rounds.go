package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The per-round ratio: a second statistic beside benchstat's, computed from the raw
// results (go test's output, which benchstat also reads).
//
// Why: sidebyside.Pair runs the two sides of a round back to back, alternating which
// goes first. When the machine drifts — a noisy neighbour on the host, a slower first
// minute — it slows both sides of the rounds it lasts through. benchstat's comparison
// treats the two sides as independent samples: the drift widens each side's interval,
// and the ratio's range (each median moved to the far end of its interval) adds the
// two widths up. Dividing within each round cancels what the two sides shared. The
// per-round ratio is the median of those n ratios, with the distribution-free 95%
// confidence interval of a median (for 10 rounds, the 2nd to the 9th ratio).

// roundRatios are, per row (package and name without round= and impl=, joined by
// "\x00"), the time ratio ours ÷ client-go of each round that measured both sides.
type roundRatios map[string][]float64

// parseRounds reads go test -bench output. Every line of a benchmark named
// ".../round=R/impl=ours" or ".../impl=client-go" gives that side's ns/op in round R;
// lines that are not benchmark results (headers, logs) are skipped, except "pkg:",
// which names the package of the lines after it.
func parseRounds(r io.Reader) (roundRatios, error) {
	type roundKey struct{ row, round string }
	sides := map[roundKey]*[2]float64{} // ns/op, indexed by ours and clientGo; NaN until seen
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if v, ok := strings.CutPrefix(text, "pkg: "); ok {
			pkg = v
			continue
		}
		// A result line: "BenchmarkName-2  <iterations>  <value> ns/op  <more metrics>".
		fields := strings.Fields(text)
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") || fields[3] != "ns/op" {
			continue
		}
		if _, err := strconv.Atoi(fields[1]); err != nil {
			continue // a log line that starts with a benchmark's name
		}
		name, round, impl := splitRound(trimProcs(strings.TrimPrefix(fields[0], "Benchmark")))
		side, known := sideOf[impl]
		if round == "" || !known {
			continue
		}
		v, err := strconv.ParseFloat(fields[2], 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: %s ns/op: %w", line, fields[0], err)
		}
		k := roundKey{row: pkg + "\x00" + name, round: round}
		if sides[k] == nil {
			sides[k] = &[2]float64{math.NaN(), math.NaN()}
		}
		sides[k][side] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := roundRatios{}
	for k, s := range sides {
		if math.IsNaN(s[ours]) || math.IsNaN(s[clientGo]) || s[clientGo] == 0 {
			continue
		}
		out[k.row] = append(out[k.row], s[ours]/s[clientGo])
	}
	return out, nil
}

// splitRound takes the round= and impl= elements out of a sub-benchmark's name:
// "Lister/n=1k/round=3/impl=ours" → "Lister/n=1k", "3", "ours". round is "" when the
// name has no round= element.
func splitRound(full string) (name, round, impl string) {
	var kept []string
	for part := range strings.SplitSeq(full, "/") {
		if v, ok := strings.CutPrefix(part, "round="); ok {
			round = v
		} else if v, ok := strings.CutPrefix(part, "impl="); ok {
			impl = v
		} else {
			kept = append(kept, part)
		}
	}
	return strings.Join(kept, "/"), round, impl
}

// medianInterval returns the median of xs and its distribution-free 95% confidence
// interval: the k-th smallest and k-th largest value, for the largest k at which
// the chance that the median lies between them is still at least 95% (each value
// falls below the true median with probability ½, so that chance is
// 1 − 2·P(Binomial(n, ½) < k)). ok is false when n is too small for any k (n < 6).
func medianInterval(xs []float64) (median, lo, hi float64, ok bool) {
	n := len(xs)
	if n == 0 {
		return 0, 0, 0, false
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	median = s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	k := 0
	for c := 1; c <= n/2; c++ {
		if 1-2*binomialBelow(n, c) < 0.95 {
			break
		}
		k = c
	}
	if k == 0 {
		return median, 0, 0, false
	}
	return median, s[k-1], s[n-k], true
}

// binomialBelow is P(X < c) for X ~ Binomial(n, ½).
func binomialBelow(n, c int) float64 {
	p, term := 0.0, math.Pow(0.5, float64(n)) // term = C(n, i) / 2^n
	for i := range c {
		p += term
		term = term * float64(n-i) / float64(i+1)
	}
	return p
}

// perRound formats the per-round ratio of one row's unit: "0.73 (0.53–0.82)", with
// "tie" when the interval contains 1.0; "–" when there are too few rounds.
func perRound(ratios []float64) string {
	m, lo, hi, ok := medianInterval(ratios)
	if !ok {
		return "–"
	}
	s := fmt.Sprintf("%.2f (%.2f–%.2f)", m, lo, hi)
	if lo <= 1 && 1 <= hi {
		s += " tie"
	}
	return s
}
