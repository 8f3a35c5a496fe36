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
		line := regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(row) + ` \| B-live-after \| ([0-9.]+)M `).FindSubmatch(results)
		if assert.NotNil(t, line, "bench/RESULTS.md has no B-live-after for %s", row) {
			assert.Equal(t, mb, string(line[1]), "%s (%s): docs/sizing.md quotes %s MB", row, form, mb)
		}
		v, err := strconv.Atoi(mb)
		require.NoError(t, err)
		perPod = append(perPod, fmt.Sprintf("%d,%03d", v*10/1000, v*10%1000))
	}
	want := fmt.Sprintf("%s, %s and %s bytes a Pod", perPod[0], perPod[1], perPod[2])
	assert.True(t, strings.Contains(text, want), "docs/sizing.md should say %q", want)
}
