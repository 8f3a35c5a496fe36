package doccheck

import (
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quoteIntro is the line a page puts before a list it quotes from a package's doc
// comment: From [`x/doc.go`](…): or From the "Section" section of [`x/doc.go`](…).
var quoteIntro = regexp.MustCompile(`^(?:From|Taken from) (?:the (?:"([^"]+)" section|invariants) of )?\[` + "`" + `[^` + "`" + `]+` + "`" + `\]\(([^)]+\.go)\)`)

// words normalizes text for comparison: Markdown and Go doc syntax dropped (code
// spans' backticks, links reduced to their text, emphasis), lower case, only letters
// and digits kept, one space between words.
func words(text string) string {
	text = linkText.ReplaceAllString(text, "$1")
	var b strings.Builder
	space := true
	for _, r := range strings.ToLower(text) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			space = false
		} else if !space {
			b.WriteRune(' ')
			space = true
		}
	}
	return strings.TrimSpace(b.String())
}

// docSection returns the bullets of the first list in a package doc comment's section
// (the section whose heading is, or starts with, section): the list ends at the first
// paragraph after it, as a page's quote does.
func docSection(t *testing.T, goFile, section string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), goFile, nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	require.NotNil(t, f.Doc, "%s has no package doc comment", goFile)
	var out []string
	in := false
	for _, line := range strings.Split(f.Doc.Text(), "\n") {
		if title, ok := strings.CutPrefix(line, "# "); ok {
			in = strings.EqualFold(title, section) || strings.HasPrefix(strings.ToLower(title), strings.ToLower(section))
			continue
		}
		if !in {
			continue
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "- "):
			out = append(out, strings.TrimPrefix(trimmed, "- "))
		case trimmed != "" && len(out) > 0 && strings.HasPrefix(line, "    "):
			out[len(out)-1] += " " + trimmed
		case trimmed != "" && len(out) > 0:
			return out // a paragraph after the list ends the quote
		}
	}
	return out
}

// pageBullets returns the bullets of the list that starts after line i of lines.
func pageBullets(lines []string, i int) []string {
	var out []string
	for _, line := range lines[i+1:] {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "- "):
			out = append(out, strings.TrimPrefix(line, "- "))
		case trimmed == "" && len(out) == 0:
		case trimmed == "" || strings.HasPrefix(line, "#"):
			return out
		case len(out) > 0 && strings.HasPrefix(line, " "):
			out[len(out)-1] += " " + trimmed
		default:
			if len(out) > 0 {
				return out
			}
		}
	}
	return out
}

// TestEveryQuotedDocCommentListIsStillInItsFile: a list a page introduces as taken
// from a package's doc comment — From [`x/doc.go`](…): for its Invariants, From the
// "Section" section of [`x/doc.go`](…): for another — has one bullet per bullet of
// that section's list, and each says what the doc comment's says: the same words in the
// same order, once Markdown and punctuation are set aside. The page may add words (a
// link, a test's name, an aside), never drop or change one; so a doc comment edited
// without its page, or a page edited without its doc comment, fails here.
func TestEveryQuotedDocCommentListIsStillInItsFile(t *testing.T) {
	quotes := 0
	for _, page := range pages(t) {
		lines := strings.Split(read(t, page), "\n")
		for i, line := range lines {
			m := quoteIntro.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			quotes++
			section := m[1]
			if section == "" {
				section = "Invariants"
			}
			goFile := filepath.Join(repoRoot, filepath.FromSlash(path.Clean(path.Join(path.Dir(page), m[2]))))
			want := docSection(t, goFile, section)
			got := pageBullets(lines, i)
			if !assert.NotEmpty(t, want, "%s:%d: %s has no bullets under %q", page, i+1, m[2], section) {
				continue
			}
			assert.Equal(t, len(want), len(got), "%s:%d quotes %d bullets of %s's %q; it has %d", page, i+1, len(got), m[2], section, len(want))
			for j := range min(len(want), len(got)) {
				w, g := words(want[j]), words(got[j])
				assert.True(t, subsequence(strings.Fields(w), strings.Fields(g)),
					"%s:%d, bullet %d, differs from %s:\n  doc.go: %s\n  page:   %s", page, i+1, j+1, m[2], want[j], got[j])
			}
		}
	}
	require.NotZero(t, quotes, "no page introduces a quoted list any more: has the intro's wording changed?")
	t.Logf("%d quoted lists checked", quotes)
}

// subsequence reports whether every word of want appears in got, in order (got may
// add words: a link, an aside).
func subsequence(want, got []string) bool {
	j := 0
	for _, w := range got {
		if j < len(want) && w == want[j] {
			j++
		}
	}
	return j == len(want)
}
