package sampleobjects

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// sizingRow is one row of docs/sizing.md's table of bytes per cached object, e.g.
// "| Pod | whole | 4,140 B |".
var sizingRow = regexp.MustCompile(`^\| (Pod|ConfigMap) \| (whole|stripped|metadata) \| ([0-9,]+) B \|`)

// BytesPerCachedObject reads docs/sizing.md's table of bytes per cached object:
// "Pod/whole" → 4140. The sizing test checks the table against measurements, and
// foo-controller's deployment.yaml test sizes from it; both read it here.
func BytesPerCachedObject(page []byte) (map[string]float64, error) {
	rows := map[string]float64{}
	for line := range strings.Lines(string(page)) {
		m := sizingRow.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(m[3], ",", ""), 64)
		if err != nil {
			return nil, fmt.Errorf("docs/sizing.md: %q: %w", line, err)
		}
		rows[m[1]+"/"+m[2]] = v
	}
	if len(rows) != 6 {
		return nil, fmt.Errorf("docs/sizing.md's table has %d of its 6 rows: %v", len(rows), rows)
	}
	return rows, nil
}
