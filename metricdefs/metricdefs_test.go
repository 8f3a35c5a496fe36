package metricdefs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEveryMetricHasOneDefinitionWithHelpAndTheNameLabelFirst(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range All() {
		assert.False(t, seen[d.Name], "%s defined twice", d.Name)
		seen[d.Name] = true
		assert.NotEmpty(t, d.Help, d.Name)
		require.NotEmpty(t, d.Labels, d.Name)
		assert.Equal(t, "name", d.Labels[0], d.Name)
		assert.Equal(t, d.Kind == Histogram, d.Buckets != nil, "%s: buckets only for histograms", d.Name)
		assert.Equal(t, d.Kind == Counter, strings.HasSuffix(d.Name, "_total"), "%s: counters and only counters end in _total", d.Name)
		got, ok := Get(d.Name)
		assert.True(t, ok)
		assert.Equal(t, d, got)
	}
	assert.Len(t, seen, 7+12+9+5, "the workqueue's, the reflector's, the informer's (two of them a sharded informer's) and the election's")
	_, ok := Get("no_such_metric")
	assert.False(t, ok)
}

// metricNameRE matches a declared metric name constant: `FooMetricName = "foo_total"`.
var metricNameRE = regexp.MustCompile(`(?m)^\s*[A-Za-z]+MetricName\s*=\s*"([a-z_]+)"`)

// Every metric name a stage declares is described here, and nothing else is: a new
// metric without a description fails this test, not a scrape.
func TestEveryMetricNameTheStagesDeclareIsDescribed(t *testing.T) {
	declared := map[string]bool{}
	for _, dir := range []string{"../workqueue", "../reflector", "../informer", "../leaderelection"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			require.NoError(t, err)
			for _, m := range metricNameRE.FindAllStringSubmatch(string(src), -1) {
				declared[m[1]] = true
			}
		}
	}
	described := map[string]bool{}
	for _, d := range All() {
		described[d.Name] = true
	}
	assert.Equal(t, declared, described)
}
