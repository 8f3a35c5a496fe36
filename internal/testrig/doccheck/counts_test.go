package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// numberWords spells the counts the pages write out.
var numberWords = func() map[string]int {
	ones := []string{"", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
		"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
	tens := []string{"", "", "twenty", "thirty", "forty", "fifty"}
	m := map[string]int{}
	for i, w := range ones[1:] {
		m[w] = i + 1
	}
	for t := 2; t < len(tens); t++ {
		m[tens[t]] = t * 10
		for o := 1; o <= 9; o++ {
			m[tens[t]+"-"+ones[o]] = t*10 + o
		}
	}
	return m
}()

func read(t *testing.T, page string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, page))
	require.NoError(t, err)
	return string(b)
}

// TestTheCountsThePagesStateAreWhatTheyCount: a page that says how many of something
// there are says the number there is.
func TestTheCountsThePagesStateAreWhatTheyCount(t *testing.T) {
	faqEntries := len(regexp.MustCompile(`(?m)^## [0-9]+\. `).FindAllString(read(t, "docs/faq.md"), -1))
	for _, c := range []struct {
		page, claim string // claim captures the count, spelled out
		count       int
		what        string
	}{
		{"docs/README.md", `— ([a-z-]+) problems and questions`, faqEntries, "the FAQ's numbered entries"},
	} {
		m := regexp.MustCompile(c.claim).FindStringSubmatch(read(t, c.page))
		if !assert.NotNil(t, m, "%s no longer says %q", c.page, c.claim) {
			continue
		}
		n, ok := numberWords[strings.ToLower(m[1])]
		assert.True(t, ok, "%s: %q is not a number this test can read", c.page, m[1])
		assert.Equal(t, c.count, n, "%s says %q; %s: %d", c.page, m[0], c.what, c.count)
	}
}
