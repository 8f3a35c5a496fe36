package doccheck

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shardedRows reads the sharded benchmarks' figures from bench/RESULTS.md: the
// headline table's cells and the other metrics' values of ours and client-go's.
type shardedRows struct{ results string }

// cells is the headline row of name, split at its bars: [ours, client-go, time ratio,
// per-round ratio, client CPU ours, client CPU ratio, peak heap ours, peak heap
// ratio, B/op ratio, allocs/op ratio].
func (r shardedRows) cells(t *testing.T, name string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(name) + ` \|((?: [^|]+ \|){10})$`).FindStringSubmatch(r.results)
	require.NotNil(t, m, "bench/RESULTS.md has no headline row %s", name)
	var out []string
	for _, c := range strings.Split(strings.TrimSuffix(m[1], "|"), "|") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

// lead is the number a cell starts with ("1142 ms ±13%" → 1142, "200MB ±1%" → 200).
func lead(t *testing.T, cell string) float64 {
	t.Helper()
	m := regexp.MustCompile(`^[0-9.]+`).FindString(cell)
	v, err := strconv.ParseFloat(m, 64)
	require.NoError(t, err, "cell %q", cell)
	return v
}

// metric is the other-metrics value of name's metric, ours (side 0) or client-go's
// (side 1), in the unit RESULTS.md prints it (M for the bytes rows).
func (r shardedRows) metric(t *testing.T, name, metric string, side int) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(name) + ` \| ` + metric + ` \| ([0-9.]+)M ±[0-9]+% \| ([0-9.]+)M ±`).FindStringSubmatch(r.results)
	require.NotNil(t, m, "bench/RESULTS.md has no %s for %s", metric, name)
	v, err := strconv.ParseFloat(m[1+side], 64)
	require.NoError(t, err)
	return v
}

// TestChapterNineQuotesTheShardedRows: chapter 9's tables of what a shard costs are
// bench/RESULTS.md's sharded rows divided by the unsharded sync of the same run, the
// claim that each shard's client CPU and peak heap stayed within 1.15/N of it holds,
// and the comparison with client-go quotes the rows' own ratios.
func TestChapterNineQuotesTheShardedRows(t *testing.T) {
	rows := shardedRows{results: read(t, "bench/RESULTS.md")}
	page := read(t, "docs/09-outgrowing-one-replica.md")
	text := strings.Join(strings.Fields(page), " ")
	const server, client = "ShardedFactorySync100kPods/shards=", "ShardedFactorySync100kPodsClientFilter/shards="
	base := rows.cells(t, server+"1")
	cpu1, peak1 := lead(t, base[4]), lead(t, base[6])
	live1, wire1 := rows.metric(t, server+"1", "B-live-after", 0), rows.metric(t, server+"1", "B-wire", 0)
	for _, n := range []int{2, 4} {
		name := fmt.Sprint(server, n)
		c := rows.cells(t, name)
		cpu, peak := lead(t, c[4])/cpu1, lead(t, c[6])/peak1
		live, wire := rows.metric(t, name, "B-live-after", 0)/live1, rows.metric(t, name, "B-wire", 0)/wire1
		assert.Contains(t, page, fmt.Sprintf("| %d | %.2f | %.2f | %.2f | %.2f |", n, cpu, peak, live, wire), "shards=%d, the apiserver filtering", n)
		target := 1.15 / float64(n)
		assert.LessOrEqual(t, cpu, target, "shards=%d: client CPU %.3f of unsharded, above 1.15/N, which the chapter says held", n, cpu)
		assert.LessOrEqual(t, peak, target, "shards=%d: peak heap %.3f of unsharded, above 1.15/N, which the chapter says held", n, peak)

		cf := fmt.Sprint(client, n)
		assert.Contains(t, page, fmt.Sprintf("| %d | %.2f | %.2f | %.2f |", n,
			lead(t, rows.cells(t, cf)[4])/cpu1, rows.metric(t, cf, "B-live-after", 0)/live1, rows.metric(t, cf, "B-live-after", 1)/live1),
			"shards=%d, the informer filtering", n)
	}
	two, four := rows.cells(t, server+"2"), rows.cells(t, server+"4")
	wireRatio := func(n int) string {
		name := fmt.Sprint(server, n)
		return fmt.Sprintf("%.2f", rows.metric(t, name, "B-wire", 0)/rows.metric(t, name, "B-wire", 1))
	}
	for _, quoted := range []string{
		"client CPU " + two[5] + " and " + four[5] + " of client-go's for two and four shards",
		"peak heap " + strings.Fields(two[7])[0] + " and " + strings.Fields(four[7])[0],
		"bytes on the wire " + wireRatio(2) + " and " + wireRatio(4),
	} {
		assert.Contains(t, text, quoted)
	}
}
