package promtext

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Parse reads a text exposition (what Registry.WriteTo writes, or any Prometheus
// endpoint's /metrics) into series → value: the key is the sample line up to its value,
// `name{label="v"}`, histograms' `_count` and `_sum` lines included. Comments and blank
// lines are skipped; a line with no parsable value is an error naming it.
func Parse(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i <= 0 {
			return nil, fmt.Errorf("promtext: not a sample line: %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("promtext: sample line %q: %w", line, err)
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}
