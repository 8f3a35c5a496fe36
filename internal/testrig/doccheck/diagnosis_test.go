package doccheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goSources returns the text of every non-test Go file of the repository.
func goSources(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != repoRoot || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.Write(src)
		}
		return nil
	}))
	return b.String()
}

var (
	// quotedMessage is a message the table quotes: opened after a space or a
	// parenthesis, closed before one or a punctuation mark (so a quote inside a quoted
	// error text is not taken for a message).
	quotedMessage = regexp.MustCompile(`(?:^|[\s(])"([^"]{12,})"(?:[\s,;.)]|$)`)
	metricName    = regexp.MustCompile("`((?:informer|reflector|workqueue|leader_election)_[a-z_]+)`")
	messageParts  = regexp.MustCompile(`…|\(|\)|: `)
)

// TestTheDiagnosisTableQuotesTheCodesLogLinesAndMetrics: chapter 4's symptom → metric
// → log table quotes log messages and metric names so that a reader can grep for
// them; each message (a "…" stands for what the code fills in) and each metric name
// is in the code as the table writes it.
func TestTheDiagnosisTableQuotesTheCodesLogLinesAndMetrics(t *testing.T) {
	page := read(t, "docs/04-informer.md")
	start := strings.Index(page, "\n## Diagnosing a running informer")
	require.NotEqual(t, -1, start, "chapter 4 has no diagnosis table any more")
	section := page[start+1:]
	if end := strings.Index(section, "\n## "); end != -1 {
		section = section[:end]
	}
	code := goSources(t)
	messages, metrics := 0, 0
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| **") {
			continue
		}
		for _, m := range quotedMessage.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
			// A message may be built from a sentinel error and a format ("%w (%s): …"):
			// each run of words between "…", parentheses and colons is in the code.
			for _, part := range messageParts.Split(m[1], -1) {
				part = strings.TrimSpace(part)
				if len(part) < 8 {
					continue
				}
				messages++
				assert.True(t, strings.Contains(code, part), "chapter 4's diagnosis table quotes a log line the code does not write: %q (no %q in the code)", m[1], part)
			}
		}
		for _, m := range metricName.FindAllStringSubmatch(line, -1) {
			metrics++
			assert.True(t, strings.Contains(code, `"`+m[1]+`"`), "chapter 4's diagnosis table names a metric the code does not define: %s", m[1])
		}
	}
	require.Greater(t, messages, 10, "the table's log lines were found")
	require.Greater(t, metrics, 10, "the table's metric names were found")
	t.Logf("%d log-line fragments and %d metric names checked", messages, metrics)
}
