package sampleobjects_test

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/internal/testrig/benchresults"
	"github.com/kubeinternals/informers/internal/testrig/sampleobjects"
)

// TestTheSizingPageQuotesTheBenchResults: the 100,000-Pod live heaps docs/sizing.md
// quotes from bench/RESULTS.md are the ones there, and the bytes a Pod it derives from
// them are theirs divided by 100,000. A new whole bench run that moves them fails here
// until the page follows.
func TestTheSizingPageQuotesTheBenchResults(t *testing.T) {
	page, err := os.ReadFile("../../../docs/sizing.md")
	require.NoError(t, err)
	results, err := os.ReadFile("../../../bench/RESULTS.md")
	require.NoError(t, err)
	text := strings.Join(strings.Fields(string(page)), " ")
	quoted := regexp.MustCompile(`([0-9]+) MB ([a-z ]+?) \(`+"`"+`([A-Za-z0-9/=-]+)`+"`"+`\)`).FindAllStringSubmatch(text, -1)
	require.Len(t, quoted, 3, "docs/sizing.md quotes three rows of bench/RESULTS.md")
	var perPod []string
	for _, q := range quoted {
		mb, form, row := q[1], q[2], q[3]
		ours, _, err := benchresults.Metric(string(results), row, "B-live-after")
		if assert.NoError(t, err) {
			assert.Equal(t, mb+"M", ours, "%s (%s): docs/sizing.md quotes %s MB", row, form, mb)
		}
		v, err := strconv.Atoi(mb)
		require.NoError(t, err)
		perPod = append(perPod, fmt.Sprintf("%d,%03d", v*10/1000, v*10%1000))
	}
	want := fmt.Sprintf("%s, %s and %s bytes a Pod", perPod[0], perPod[1], perPod[2])
	assert.True(t, strings.Contains(text, want), "docs/sizing.md should say %q", want)
}

// TestTheSizingPageQuotesTheShardedRows: the table of one shard's cache and peak heap
// on docs/sizing.md quotes bench/RESULTS.md's sharded rows (B-live-after, and the
// peak heap of ours), the ratios of peak to cache it derives are theirs, and its
// worked example is the formula's arithmetic from the table of bytes per object.
func TestTheSizingPageQuotesTheShardedRows(t *testing.T) {
	raw, err := os.ReadFile("../../../docs/sizing.md")
	require.NoError(t, err)
	results, err := os.ReadFile("../../../bench/RESULTS.md")
	require.NoError(t, err)
	page := strings.Join(strings.Fields(string(raw)), " ")
	// live is a row's B-live-after (ours) in MB; peak its peak heap (ours) in MB; both
	// as printed.
	live := func(row string) string {
		ours, _, err := benchresults.Metric(string(results), row, "B-live-after")
		require.NoError(t, err)
		return strings.TrimSuffix(ours, "M")
	}
	peak := func(row string) string {
		cells, err := benchresults.Headline(string(results), row)
		require.NoError(t, err)
		return strings.TrimSuffix(strings.Fields(cells[benchresults.PeakHeapOurs])[0], "MB")
	}
	const server, client = "ShardedFactorySync100kPods/shards=", "ShardedFactorySync100kPodsClientFilter/shards="
	assert.Contains(t, page, fmt.Sprintf("| whole | %s MB | %s MB | – |", live(server+"1"), peak(server+"1")))
	for _, n := range []string{"2", "4"} {
		s, err := strconv.ParseFloat(live(server+n), 64)
		require.NoError(t, err)
		c, err := strconv.ParseFloat(live(client+n), 64)
		require.NoError(t, err)
		assert.InEpsilon(t, s, c, 0.01, "the cache of shard 0 of %s is the same whoever filters, to 1%%", n)
		assert.Contains(t, page, fmt.Sprintf("| shard 0 of %s | %s MB | %s MB | %s MB |", n, live(server+n), peak(server+n), peak(client+n)))
	}
	ratio := func(n string) string {
		p, err := strconv.ParseFloat(peak(client+n), 64)
		require.NoError(t, err)
		c, err := strconv.ParseFloat(live(client+n), 64)
		require.NoError(t, err)
		return fmt.Sprintf("%.1f×", p/c)
	}
	assert.Contains(t, page, "the peak is "+ratio("2")+" the cache for a shard of two and "+ratio("4")+" for a shard of four")

	table, err := sampleobjects.BytesPerCachedObject(raw)
	require.NoError(t, err)
	const mib = 1 << 20
	whole, quarter := 100_000*table["Pod/whole"]/mib, 25_000*table["Pod/whole"]/mib
	for _, figure := range []string{
		fmt.Sprintf("`C` = 100,000 × %s B = %.1f MiB", "4,140", whole),
		fmt.Sprintf("`F + 2 × (C + C)` = F + %.1f MiB", 4*whole),
		fmt.Sprintf("`C` = %.1f MiB, and its limit is F + %.1f MiB", quarter, 4*quarter),
	} {
		assert.Contains(t, page, figure)
	}
	assert.Equal(t, 4140.0, table["Pod/whole"], "the example writes the Pod's bytes out")
}
