package doccheck

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	// measured is a figure as the pages write one from a benchmark: a number with a
	// unit of time, size or ratio, or a ratio written with two decimals.
	measured = regexp.MustCompile(`(?:^|[^0-9.,v])([0-9][0-9,]*(?:\.[0-9]+)?)(?:\s?(?:(?:ms|s|µs|ns|kB|MB|GB|KB|MiB|M|min|minutes)\b|×)|\s+against\b|[–-]([0-9]+\.[0-9]+))|(?:^|[\s(])(0\.[0-9]{2})\b`)
	// release is a Kubernetes or Go release number (client-go 1.37, 1.37's), not a
	// figure.
	release = regexp.MustCompile(`\b(?:client-go|Kubernetes|Go|go|kube-apiserver|apiserver|the|a) v?1\.[0-9]{2}(?:\.[0-9]+)?\b|\b1\.[0-9]{2}(?:'s|\+| control plane| release)`)
	// number is any number RESULTS.md prints.
	number = regexp.MustCompile(`[0-9]+(?:\.[0-9]+)?`)
)

// blocks splits a page into paragraphs, list blocks and tables (text between blank
// lines), fenced code left out.
func blocks(page string) []string {
	var out []string
	var cur []string
	fenced := false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if strings.TrimSpace(line) == "" {
			if len(cur) > 0 {
				out = append(out, strings.Join(cur, "\n"))
			}
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, "\n"))
	}
	return out
}

// figures returns the measured figures in text, without code spans (benchmark names
// such as DefaultsFactorySync100kPods) and release numbers.
func figures(text string) []string {
	text = inlineCode.ReplaceAllString(text, " ")
	text = linkText.ReplaceAllString(text, "$1")
	text = release.ReplaceAllString(text, " ")
	var out []string
	for _, m := range measured.FindAllStringSubmatch(text, -1) {
		for _, g := range m[1:] {
			if g != "" {
				out = append(out, strings.ReplaceAll(g, ",", ""))
			}
		}
	}
	return out
}

// TestFiguresAttributedToTheBenchResultsAreInThem: a paragraph, list or table that
// cites bench/RESULTS.md or "the published run" (and, when it ends with a colon, the
// block it introduces)
// quotes only figures RESULTS.md prints — a time, a size, a ratio. A new whole run
// that changes a figure fails here until every page quoting it is updated. Figures of
// earlier runs belong in blocks that do not cite RESULTS.md.
func TestFiguresAttributedToTheBenchResultsAreInThem(t *testing.T) {
	printed := map[string]bool{}
	for _, n := range number.FindAllString(read(t, "bench/RESULTS.md"), -1) {
		printed[n] = true
		if strings.Contains(n, ".") {
			printed[strings.TrimRight(strings.TrimRight(n, "0"), ".")] = true
		}
	}
	checked := 0
	for _, page := range pages(t) {
		if page == "bench/RESULTS.md" {
			continue
		}
		bs := blocks(read(t, page))
		for i, b := range bs {
			if !strings.Contains(b, "RESULTS.md") && !strings.Contains(b, "published run") && !strings.Contains(b, "published `make bench`") {
				continue
			}
			text := b
			if strings.HasSuffix(strings.TrimSpace(b), ":") && i+1 < len(bs) {
				text += "\n" + bs[i+1]
			}
			fs := figures(text)
			t.Logf("%s: %v", page, fs)
			for _, f := range fs {
				checked++
				assert.True(t, printed[f] || printed[strings.TrimRight(strings.TrimRight(f, "0"), ".")],
					"%s: %q is attributed to bench/RESULTS.md, which does not print it, in:\n%s", page, f, text)
			}
		}
	}
	require.NotZero(t, checked, "no page quotes a figure from bench/RESULTS.md any more")
	t.Logf("%d figures attributed to bench/RESULTS.md found in it", checked)
}

func TestFiguresReadsWhatThePagesWrite(t *testing.T) {
	assert.Equal(t, []string{"396", "2084", "2872", "0.77", "0.52", "0.96", "3.5", "1.21", "58"},
		figures("396 MB whole, 2084 against 2872 ms, 0.77× client-go's, 1.37's reflector, (0.52–0.96), `Sync100kPods` 3.5 s, 12%, 100,000 Pods, 10 rounds, 1.21× on the 1.37 control plane, 58 minutes"))
}
