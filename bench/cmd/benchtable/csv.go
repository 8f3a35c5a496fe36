package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// The two columns benchstat is asked for (-col /impl), in the order given.
const (
	ours     = 0
	clientGo = 1
)

var sideOf = map[string]int{"ours": ours, "client-go": clientGo}

// measure is one side's summary of one unit: benchstat's median over the rounds and
// its 95% confidence interval as a fraction of the median (+Inf when benchstat could
// not give one, e.g. too few rounds).
type measure struct {
	ok     bool
	median float64
	ci     float64
}

// result is one benchmark row (one name in one package) with every unit measured.
type result struct {
	pkg, name string
	samples   int // rounds per side, from benchstat's "n=" (0 if not reported)
	units     map[string]*[2]measure
	order     []string
}

// parseCSV reads benchstat's -format csv output: "key: value" configuration lines
// (pkg: names the package of the tables that follow) and tables, one per unit,
// each a two-line header and one line per benchmark, ending at a blank line.
func parseCSV(r io.Reader) ([]*result, error) {
	var (
		results  []*result
		byKey    = map[string]*result{}
		pkg      string
		header   []string // column names: "", "client-go", "", "ours", …
		unitLine []string // ",sec/op,CI,sec/op,CI,vs base,P"
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		switch {
		case text == "":
			header, unitLine = nil, nil
			continue
		case header == nil && !strings.HasPrefix(text, ","):
			if k, v, ok := strings.Cut(text, ": "); ok && k == "pkg" {
				pkg = v
			}
			continue
		}
		fields, err := csv.NewReader(strings.NewReader(text)).Read()
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		switch {
		case header == nil:
			header = fields
			continue
		case unitLine == nil:
			if len(fields) != len(header) {
				return nil, fmt.Errorf("line %d: %d columns under a header of %d", line, len(fields), len(header))
			}
			unitLine = fields
			continue
		case fields[0] == "geomean":
			continue
		}
		name := trimProcs(fields[0])
		key := pkg + "\x00" + name
		res := byKey[key]
		if res == nil {
			res = &result{pkg: pkg, name: name, units: map[string]*[2]measure{}}
			byKey[key] = res
			results = append(results, res)
		}
		for i := 1; i+1 < len(fields) && i < len(header); i++ {
			side, ok := sideOf[header[i]]
			if !ok || unitLine[i+1] != "CI" {
				continue
			}
			unit := unitLine[i]
			if fields[i] == "" {
				continue
			}
			median, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %s %s: %w", line, name, unit, err)
			}
			m := res.units[unit]
			if m == nil {
				m = &[2]measure{}
				res.units[unit] = m
				res.order = append(res.order, unit)
			}
			m[side] = measure{ok: true, median: median, ci: parseCI(fields[i+1])}
		}
		if n := samplesOf(fields[len(fields)-1]); n > 0 {
			res.samples = n
		}
	}
	return results, sc.Err()
}

// trimProcs drops the -GOMAXPROCS suffix benchstat keeps on a name ("X-2" → "X").
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}

// parseCI turns "3%" into 0.03; anything else ("∞", "?") is unknown: +Inf.
func parseCI(s string) float64 {
	if v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64); err == nil && strings.HasSuffix(s, "%") {
		return v / 100
	}
	return math.Inf(1)
}

// samplesOf reads n from benchstat's "p=0.002 n=6" (or "n=6").
func samplesOf(p string) int {
	for f := range strings.FieldsSeq(p) {
		if v, ok := strings.CutPrefix(f, "n="); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}
