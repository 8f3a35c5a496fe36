// Package metricstext reads the Prometheus text exposition format: what
// examples/internal/promtext writes, and what a kube-apiserver's or any Prometheus
// endpoint's /metrics serves. The lab reads other processes' metrics with it, and tests
// read series back.
package metricstext

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Parse reads a text exposition (what examples/internal/promtext writes, a
// kube-apiserver's /metrics, any Prometheus endpoint's) into series → value: the key is the sample line up to its value,
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
			return nil, fmt.Errorf("metrics text: not a sample line: %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics text: sample line %q: %w", line, err)
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}
