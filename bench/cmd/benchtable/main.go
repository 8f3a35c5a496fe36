// Command benchtable reads `go test -bench -benchmem` output on stdin and prints one
// Markdown table that pairs each benchmark's "ours" and "client-go" sub-benchmarks:
//
//	| benchmark | ours ns/op | client-go ns/op | time ratio | ours allocs/op | client-go allocs/op |
//
// where time ratio = ours / client-go (below 1 means we are faster). Custom metrics
// reported with b.ReportMetric (time to sync, peak heap, …) follow in a second table.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// side is one sub-benchmark's metrics, by unit ("ns/op", "allocs/op", …).
type side map[string]float64

type pair struct{ ours, theirs side }

var procSuffix = regexp.MustCompile(`-\d+$`)

func main() {
	pairs, order, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	fmt.Print(render(pairs, order))
}

// parse collects the metrics of every ".../ours" and ".../client-go" benchmark line.
func parse(r io.Reader) (map[string]*pair, []string, error) {
	pairs := map[string]*pair{}
	var order []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		name := procSuffix.ReplaceAllString(fields[0], "")
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			continue
		}
		base, who := strings.TrimPrefix(name[:i], "Benchmark"), name[i+1:]
		if who != "ours" && who != "client-go" {
			continue
		}
		m := side{}
		// fields[1] is the iteration count; then value/unit pairs.
		for j := 2; j+1 < len(fields); j += 2 {
			v, err := strconv.ParseFloat(fields[j], 64)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: value %q: %w", fields[0], fields[j], err)
			}
			m[fields[j+1]] = v
		}
		p, ok := pairs[base]
		if !ok {
			p = &pair{}
			pairs[base] = p
			order = append(order, base)
		}
		if who == "ours" {
			p.ours = m
		} else {
			p.theirs = m
		}
	}
	return pairs, order, sc.Err()
}

func render(pairs map[string]*pair, order []string) string {
	var b strings.Builder
	b.WriteString("| benchmark | ours ns/op | client-go ns/op | time ratio | ours allocs/op | client-go allocs/op |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|\n")
	custom := map[string]bool{}
	for _, name := range order {
		p := pairs[name]
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", name,
			num(p.ours, "ns/op"), num(p.theirs, "ns/op"), ratio(p, "ns/op"),
			num(p.ours, "allocs/op"), num(p.theirs, "allocs/op"))
		for _, s := range []side{p.ours, p.theirs} {
			for unit := range s {
				if unit != "ns/op" && unit != "allocs/op" && unit != "B/op" {
					custom[unit] = true
				}
			}
		}
	}
	if len(custom) == 0 {
		return b.String()
	}
	units := make([]string, 0, len(custom))
	for u := range custom {
		units = append(units, u)
	}
	sort.Strings(units)
	b.WriteString("\n| benchmark | metric | ours | client-go | ratio |\n|---|---|---:|---:|---:|\n")
	for _, name := range order {
		p := pairs[name]
		for _, u := range units {
			if _, ok := p.ours[u]; !ok {
				if _, ok := p.theirs[u]; !ok {
					continue
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", name, u, num(p.ours, u), num(p.theirs, u), ratio(p, u))
		}
	}
	return b.String()
}

func num(s side, unit string) string {
	v, ok := s[unit]
	if !ok {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func ratio(p *pair, unit string) string {
	o, ok1 := p.ours[unit]
	t, ok2 := p.theirs[unit]
	if !ok1 || !ok2 || t == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", o/t)
}
