// Package benchresults reads the tables of bench/RESULTS.md, for the tests that check
// that a page quoting a benchmark row quotes what the row prints.
package benchresults

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The cells of a headline row after its name, as benchtable writes them.
const (
	Ours = iota
	ClientGo
	TimeRatio
	PerRoundTimeRatio
	ClientCPUOurs
	ClientCPURatio
	PeakHeapOurs
	PeakHeapRatio
	BytesPerOpRatio
	AllocsPerOpRatio
	headlineCells
)

// Headline returns the cells of the headline row of the benchmark name
// ("ShardedFactorySync100kPods/shards=2"), as printed: "1142 ms ±13%", "200MB ±1%",
// "0.61 (0.46–0.81)".
func Headline(results, name string) ([]string, error) {
	m := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(name) + ` \|((?: [^|]+ \|){` + strconv.Itoa(headlineCells) + `})$`).FindStringSubmatch(results)
	if m == nil {
		return nil, fmt.Errorf("bench/RESULTS.md has no headline row %s", name)
	}
	var cells []string
	for _, c := range strings.Split(strings.TrimSuffix(m[1], "|"), "|") {
		cells = append(cells, strings.TrimSpace(c))
	}
	return cells, nil
}

// Metric returns ours and client-go's value of one of the other metrics of the
// benchmark name ("B-live-after", "B-wire"), as printed without its interval: "197M".
func Metric(results, name, metric string) (ours, clientGo string, err error) {
	m := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(name) + ` \| ` + regexp.QuoteMeta(metric) + ` \| ([^ |]+) ±[0-9]+% \| ([^ |]+) ±`).FindStringSubmatch(results)
	if m == nil {
		return "", "", fmt.Errorf("bench/RESULTS.md has no %s for %s", metric, name)
	}
	return m[1], m[2], nil
}

// Lead is the number a printed value starts with: 1142 of "1142 ms ±13%", 200 of
// "200MB ±1%", 197 of "197M".
func Lead(value string) (float64, error) {
	n := regexp.MustCompile(`^[0-9]+(?:\.[0-9]+)?`).FindString(value)
	if n == "" {
		return 0, fmt.Errorf("%q does not start with a number", value)
	}
	return strconv.ParseFloat(n, 64)
}
