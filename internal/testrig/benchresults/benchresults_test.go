package benchresults

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const results = `| benchmark | ours | client-go | time ratio (range) | per-round time ratio (range) | client CPU ours | client CPU ratio (range) | peak heap ours | peak heap ratio (range) | B/op ratio | allocs/op ratio |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
| Sync/shards=1 | 2.26 s ±11% | 3.87 s ±14% | 0.58 (0.45–0.75) | 0.60 (0.54–0.67) | 2110 ms ±13% | 0.51 (0.38–0.67) | 405MB ±0% | 0.80 (0.76–0.84) | 0.57 | 0.84 |
| Sync/shards=10 | 1 s ±1% | 1 s ±1% | 1.00 (0.9–1.1) | 1.00 (0.9–1.1) | 9 ms ±1% | 1.00 (0.9–1.1) | 9MB ±0% | 1.00 (0.9–1.1) | 1.00 | 1.00 |

| Sync/shards=1 | B-live-after | 396M ±0% | 395.5M ±0% | 1.00 |
| Sync/shards=1 | B-wire | 5.91M ±0% | 5.89M ±0% | 1.00 |
`

func TestAHeadlineRowIsReadCellByCell(t *testing.T) {
	cells, err := Headline(results, "Sync/shards=1")
	require.NoError(t, err)
	require.Len(t, cells, headlineCells)
	assert.Equal(t, "2110 ms ±13%", cells[ClientCPUOurs])
	assert.Equal(t, "405MB ±0%", cells[PeakHeapOurs])
	assert.Equal(t, "0.51 (0.38–0.67)", cells[ClientCPURatio])
	assert.Equal(t, "0.84", cells[AllocsPerOpRatio])
	_, err = Headline(results, "Sync/shards")
	assert.Error(t, err, "a name is matched whole, not as a prefix")
}

func TestAnOtherMetricGivesBothSides(t *testing.T) {
	ours, clientGo, err := Metric(results, "Sync/shards=1", "B-live-after")
	require.NoError(t, err)
	assert.Equal(t, "396M", ours)
	assert.Equal(t, "395.5M", clientGo)
	_, _, err = Metric(results, "Sync/shards=1", "B-decoded")
	assert.Error(t, err)
}

func TestLeadReadsTheNumberAValueStartsWith(t *testing.T) {
	for value, want := range map[string]float64{"1142 ms ±13%": 1142, "200MB ±1%": 200, "98.7M": 98.7, "0.61 (0.46–0.81)": 0.61} {
		got, err := Lead(value)
		require.NoError(t, err, value)
		assert.Equal(t, want, got, value)
	}
	_, err := Lead("– ±0%")
	assert.Error(t, err)
}
