package doccheck

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/internal/testrig/benchresults"
)

// sharded reads the sharded rows of bench/RESULTS.md as numbers: a headline cell,
// and ours or client-go's value of one of the other metrics.
type sharded struct {
	t       *testing.T
	results string
}

func (r sharded) cell(name string, i int) string {
	r.t.Helper()
	cells, err := benchresults.Headline(r.results, name)
	require.NoError(r.t, err)
	return cells[i]
}

func (r sharded) number(value string) float64 {
	r.t.Helper()
	v, err := benchresults.Lead(value)
	require.NoError(r.t, err)
	return v
}

func (r sharded) metric(name, metric string, side int) float64 {
	r.t.Helper()
	ours, clientGo, err := benchresults.Metric(r.results, name, metric)
	require.NoError(r.t, err)
	return r.number([]string{ours, clientGo}[side])
}

// TestChapterNineQuotesTheShardedRows: chapter 9's tables of what a shard costs are
// bench/RESULTS.md's sharded rows divided by the unsharded sync of the same run, the
// claim that each shard's client CPU and peak heap stayed within 1.15/N of it holds,
// and the comparison with client-go quotes the rows' own ratios.
func TestChapterNineQuotesTheShardedRows(t *testing.T) {
	rows := sharded{t: t, results: read(t, "bench/RESULTS.md")}
	page := read(t, "docs/09-outgrowing-one-replica.md")
	text := strings.Join(strings.Fields(page), " ")
	const server, client = "ShardedFactorySync100kPods/shards=", "ShardedFactorySync100kPodsClientFilter/shards="
	cpu1, peak1 := rows.number(rows.cell(server+"1", benchresults.ClientCPUOurs)), rows.number(rows.cell(server+"1", benchresults.PeakHeapOurs))
	live1, wire1 := rows.metric(server+"1", "B-live-after", 0), rows.metric(server+"1", "B-wire", 0)
	for _, n := range []int{2, 4} {
		name := fmt.Sprint(server, n)
		cpu, peak := rows.number(rows.cell(name, benchresults.ClientCPUOurs))/cpu1, rows.number(rows.cell(name, benchresults.PeakHeapOurs))/peak1
		live, wire := rows.metric(name, "B-live-after", 0)/live1, rows.metric(name, "B-wire", 0)/wire1
		assert.Contains(t, page, fmt.Sprintf("| %d | %.2f | %.2f | %.2f | %.2f |", n, cpu, peak, live, wire), "shards=%d, the apiserver filtering", n)
		target := 1.15 / float64(n)
		assert.LessOrEqual(t, cpu, target, "shards=%d: client CPU %.3f of unsharded, above 1.15/N, which the chapter says held", n, cpu)
		assert.LessOrEqual(t, peak, target, "shards=%d: peak heap %.3f of unsharded, above 1.15/N, which the chapter says held", n, peak)

		cf := fmt.Sprint(client, n)
		assert.Contains(t, page, fmt.Sprintf("| %d | %.2f | %.2f | %.2f |", n,
			rows.number(rows.cell(cf, benchresults.ClientCPUOurs))/cpu1, rows.metric(cf, "B-live-after", 0)/live1, rows.metric(cf, "B-live-after", 1)/live1),
			"shards=%d, the informer filtering", n)
	}
	wireRatio := func(n int) string {
		name := fmt.Sprint(server, n)
		return fmt.Sprintf("%.2f", rows.metric(name, "B-wire", 0)/rows.metric(name, "B-wire", 1))
	}
	for _, quoted := range []string{
		"client CPU " + rows.cell(server+"2", benchresults.ClientCPURatio) + " and " + rows.cell(server+"4", benchresults.ClientCPURatio) + " of client-go's for two and four shards",
		"peak heap " + strings.Fields(rows.cell(server+"2", benchresults.PeakHeapRatio))[0] + " and " + strings.Fields(rows.cell(server+"4", benchresults.PeakHeapRatio))[0],
		"bytes on the wire " + wireRatio(2) + " and " + wireRatio(4),
	} {
		assert.Contains(t, text, quoted)
	}
}
