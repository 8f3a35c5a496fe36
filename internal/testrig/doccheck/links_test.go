package doccheck

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoRoot is the repository's root, relative to this package.
const repoRoot = "../../.."

// pages returns every Markdown file of the repository, as slash paths from the root.
func pages(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != repoRoot || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(repoRoot, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, out)
	return out
}

var (
	// link is a Markdown link or image: [text](target) or ![alt](target "title").
	link = regexp.MustCompile(`!?\[[^\]]*\]\(([^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+"[^"]*")?\)`)
	// inlineCode is a code span, whose text is not a link.
	inlineCode = regexp.MustCompile("`+[^`]*`+")
	heading    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	// htmlAnchor is an explicit anchor: <a id="…"> or <a name="…">.
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	// linkText is a link reduced to its text, as a heading's anchor counts it.
	linkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// prose returns a page's lines outside fenced code blocks, with code spans blanked,
// each with its line number.
func prose(text string) (lines []string, numbers []int) {
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		lines = append(lines, line)
		numbers = append(numbers, i+1)
	}
	return lines, numbers
}

// anchors returns the anchors GitHub gives a page's headings (lower case, every
// character but letters, digits, spaces, hyphens and underscores dropped, spaces to
// hyphens, a repeated one suffixed -1, -2, …), and its explicit <a id> anchors.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	lines, _ := prose(text)
	for _, line := range lines {
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		title := m[1]
		// A link in a heading counts by its text.
		title = linkText.ReplaceAllString(title, "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestEveryRelativeLinkAndAnchorResolves: every relative link of every Markdown page
// names a file or directory that exists, and every #anchor one of the target page's
// headings (or explicit anchors).
func TestEveryRelativeLinkAndAnchorResolves(t *testing.T) {
	cache := map[string]map[string]bool{}
	anchorsOf := func(page string) map[string]bool {
		if _, ok := cache[page]; !ok {
			cache[page] = anchors(read(t, page))
		}
		return cache[page]
	}
	links := 0
	for _, page := range pages(t) {
		lines, numbers := prose(read(t, page))
		for i, line := range lines {
			line = inlineCode.ReplaceAllStringFunc(line, func(s string) string { return strings.Repeat(" ", len(s)) })
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				where := fmt.Sprintf("%s:%d: %s", page, numbers[i], target)
				file, frag, _ := strings.Cut(target, "#")
				resolved := page
				if file != "" {
					resolved = path.Clean(path.Join(path.Dir(page), file))
					if strings.HasPrefix(resolved, "../") {
						t.Errorf("%s: points outside the repository", where)
						continue
					}
					if _, err := os.Stat(filepath.Join(repoRoot, resolved)); err != nil {
						t.Errorf("%s: no such file or directory", where)
						continue
					}
				}
				if frag == "" || !strings.HasSuffix(resolved, ".md") {
					continue
				}
				assert.True(t, anchorsOf(resolved)[frag], "%s: %s has no heading with anchor #%s", where, resolved, frag)
			}
		}
	}
	t.Logf("%d relative links checked", links)
}
