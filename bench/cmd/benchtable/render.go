package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The units every benchmark reports; anything else is a custom metric.
const (
	timeUnit   = "sec/op"
	bytesUnit  = "B/op"
	allocsUnit = "allocs/op"
)

// The client-cost units of the control-plane rows (cpusample.Unit, and heapsample's
// MB-heap-peak as benchstat names it): when a package's rows report them, its main
// table shows them beside wall time, each ratio with its range.
const (
	cpuUnit  = "cpu-ms/op"
	peakUnit = "B-heap-peak"
)

// wideRange is how far a ratio's range may reach from its median and still decide a
// row: [median×0.67, median×1.5]. A client-CPU range wider than that is flagged.
const wideLow, wideHigh = 0.67, 1.5

// base is the benchmark function a row belongs to: "Lister/n=1k" → "Lister".
func base(name string) string {
	b, _, _ := strings.Cut(name, "/")
	return b
}

// render prints every package's tables. rounds, if not nil, adds the per-round time
// ratio (rounds.go) beside benchstat's.
func render(results []*result, docs map[string]benchDoc, rounds roundRatios) string {
	var b strings.Builder
	var pkgs []string
	byPkg := map[string][]*result{}
	for _, r := range results {
		if _, ok := byPkg[r.pkg]; !ok {
			pkgs = append(pkgs, r.pkg)
		}
		byPkg[r.pkg] = append(byPkg[r.pkg], r)
	}
	for _, pkg := range pkgs {
		rows := byPkg[pkg]
		var headline, off []*result
		for _, r := range rows {
			if docs[base(r.name)].OffHeadline != "" {
				off = append(off, r)
			} else {
				headline = append(headline, r)
			}
		}
		fmt.Fprintf(&b, "## %s\n\n", pkg)
		fmt.Fprintf(&b, "Medians of %s rounds a side (95%% confidence interval). Ratios are ours ÷ client-go: below 1 we are faster or smaller. A time ratio whose range contains 1.0 is a tie.", samplesText(rows))
		if rounds != nil {
			b.WriteString(" The per-round time ratio divides the two sides of each round, which ran back to back, and gives the median of those ratios with its 95% confidence interval (for 10 rounds, from the 2nd to the 9th ratio): a slowdown of the machine that lasts through both sides of a round cancels out of it.")
		}
		b.WriteString("\n\n")
		mainTable(&b, headline, rounds)
		if len(off) > 0 {
			b.WriteString("\nNot in the headline (see why below):\n\n")
			mainTable(&b, off, rounds)
		}
		otherMetrics(&b, rows)
		fairness(&b, rows, docs)
		b.WriteString("\n")
	}
	return b.String()
}

func samplesText(rows []*result) string {
	lo, hi := math.MaxInt, 0
	for _, r := range rows {
		lo, hi = min(lo, r.samples), max(hi, r.samples)
	}
	switch {
	case hi == 0:
		return "?"
	case lo == hi:
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

func mainTable(b *strings.Builder, rows []*result, rounds roundRatios) {
	if hasUnit(rows, cpuUnit) {
		clientCostTable(b, rows, rounds)
		return
	}
	b.WriteString("| benchmark | ours | client-go | time ratio (range) |" + perRoundHeader(rounds) + " ours B/op | client-go B/op | B/op ratio | allocs/op ratio |\n")
	b.WriteString("|---|---:|---:|---:|" + perRoundRule(rounds) + "---:|---:|---:|---:|\n")
	for _, r := range rows {
		t := r.units[timeUnit]
		bytes, allocs := r.units[bytesUnit], r.units[allocsUnit]
		fmt.Fprintf(b, "| %s | %s | %s | %s |%s %s | %s | %s | %s |\n", r.name,
			withCI(t, ours, formatTime), withCI(t, clientGo, formatTime), timeRatio(t), perRoundCell(rounds, r),
			plain(bytes, ours, formatCount), plain(bytes, clientGo, formatCount),
			ratioText(bytes), ratioText(allocs))
	}
}

// perRoundHeader, perRoundRule and perRoundCell are the per-round time ratio's
// column, present only when the raw results were given.
func perRoundHeader(rounds roundRatios) string {
	if rounds == nil {
		return ""
	}
	return " per-round time ratio (range) |"
}

func perRoundRule(rounds roundRatios) string {
	if rounds == nil {
		return ""
	}
	return "---:|"
}

func perRoundCell(rounds roundRatios, r *result) string {
	if rounds == nil {
		return ""
	}
	return " " + perRound(rounds[r.pkg+"\x00"+r.name]) + " |"
}

// clientCostTable is the main table of rows measured against a control plane: wall
// time (noisy: the apiserver shares the cores), then what the client itself spent —
// its CPU time and its peak heap, each ours with its interval and the ratio with its
// range — and B/op. Ours in absolute terms sizes a process (docs/sizing.md).
func clientCostTable(b *strings.Builder, rows []*result, rounds roundRatios) {
	b.WriteString("| benchmark | ours | client-go | time ratio (range) |" + perRoundHeader(rounds) + " client CPU ours | client CPU ratio (range) | peak heap ours | peak heap ratio (range) | B/op ratio | allocs/op ratio |\n")
	b.WriteString("|---|---:|---:|---:|" + perRoundRule(rounds) + "---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		t, cpu := r.units[timeUnit], r.units[cpuUnit]
		cpuText := ratioRange(cpu)
		if wide(cpu) {
			cpuText += " **wide**"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |%s %s | %s | %s | %s | %s | %s |\n", r.name,
			withCI(t, ours, formatTime), withCI(t, clientGo, formatTime), timeRatio(t), perRoundCell(rounds, r),
			withCI(cpu, ours, formatMillis), cpuText, withCI(r.units[peakUnit], ours, formatBytes), ratioRange(r.units[peakUnit]),
			ratioText(r.units[bytesUnit]), ratioText(r.units[allocsUnit]))
	}
}

func hasUnit(rows []*result, unit string) bool {
	for _, r := range rows {
		if r.units[unit] != nil {
			return true
		}
	}
	return false
}

// wide reports whether m's ratio range reaches beyond [median×wideLow, median×wideHigh].
func wide(m *[2]measure) bool {
	r, lo, hi, ok := ratioBounds(m)
	return ok && (lo < r*wideLow || hi > r*wideHigh)
}

func formatMillis(v float64) string { return formatCount(v) + " ms" }

func formatBytes(v float64) string { return formatCount(v) + "B" }

func otherMetrics(b *strings.Builder, rows []*result) {
	var lines []string
	for _, r := range rows {
		for _, u := range r.order {
			if u == timeUnit || u == bytesUnit || u == allocsUnit || u == cpuUnit || u == peakUnit {
				continue
			}
			m := r.units[u]
			lines = append(lines, fmt.Sprintf("| %s | %s | %s | %s | %s |", r.name, u,
				withCI(m, ours, formatCount), withCI(m, clientGo, formatCount), ratioText(m)))
		}
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("\nOther metrics:\n\n| benchmark | metric | ours | client-go | ratio |\n|---|---|---:|---:|---:|\n")
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteString("\n")
}

func fairness(b *strings.Builder, rows []*result, docs map[string]benchDoc) {
	b.WriteString("\nWhat each row compares:\n\n")
	seen := map[string]bool{}
	for _, r := range rows {
		name := base(r.name)
		if seen[name] {
			continue
		}
		seen[name] = true
		d := docs[name]
		fair := d.Fair
		if fair == "" {
			fair = "(its doc comment has no Fair: paragraph)"
		}
		fmt.Fprintf(b, "- **%s**: %s", name, fair)
		if d.OffHeadline != "" {
			fmt.Fprintf(b, " Not in the headline: %s", d.OffHeadline)
		}
		b.WriteString("\n")
	}
}

// timeRatio is ours ÷ client-go with its range: each median moved to the far end of
// its confidence interval. A range containing 1.0 is a tie.
func timeRatio(m *[2]measure) string { return ratioRange(m) }

// ratioRange is timeRatio for any unit.
func ratioRange(m *[2]measure) string {
	r, lo, hi, ok := ratioBounds(m)
	if !ok {
		return "–"
	}
	s := fmt.Sprintf("%.2f (%s–%s)", r, formatRatio(lo), formatRatio(hi))
	if lo <= 1 && 1 <= hi {
		s += " tie"
	}
	return s
}

// ratioBounds is ours ÷ client-go of the medians and its range.
func ratioBounds(m *[2]measure) (r, lo, hi float64, ok bool) {
	if m == nil || !m[ours].ok || !m[clientGo].ok || m[clientGo].median == 0 {
		return 0, 0, 0, false
	}
	o, c := m[ours], m[clientGo]
	r = o.median / c.median
	lo = max(o.median*(1-o.ci)/(c.median*(1+c.ci)), 0)
	hi = math.Inf(1)
	if c.ci < 1 {
		hi = o.median * (1 + o.ci) / (c.median * (1 - c.ci))
	}
	return r, lo, hi, true
}

func formatRatio(v float64) string {
	if math.IsInf(v, 1) {
		return "∞"
	}
	return fmt.Sprintf("%.2f", v)
}

// ratioText is ours ÷ client-go of the medians.
func ratioText(m *[2]measure) string {
	switch {
	case m == nil || !m[ours].ok || !m[clientGo].ok:
		return "–"
	case m[ours].median == 0 && m[clientGo].median == 0:
		return "both 0"
	case m[clientGo].median == 0:
		return "client-go 0"
	}
	return fmt.Sprintf("%.2f", m[ours].median/m[clientGo].median)
}

func withCI(m *[2]measure, side int, format func(float64) string) string {
	if m == nil || !m[side].ok {
		return "–"
	}
	s := format(m[side].median)
	if ci := m[side].ci; !math.IsInf(ci, 1) {
		s += fmt.Sprintf(" ±%.0f%%", ci*100)
	}
	return s
}

func plain(m *[2]measure, side int, format func(float64) string) string {
	if m == nil || !m[side].ok {
		return "–"
	}
	return format(m[side].median)
}

// formatTime prints seconds with a unit that keeps three significant digits.
func formatTime(s float64) string {
	switch {
	case s >= 1:
		return fmt.Sprintf("%.3g s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.3g ms", s*1e3)
	case s >= 1e-6:
		return fmt.Sprintf("%.3g µs", s*1e6)
	}
	return fmt.Sprintf("%.3g ns", s*1e9)
}

// formatCount prints a count or size with three significant digits and an SI suffix.
func formatCount(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return fmt.Sprintf("%.3gG", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
