package doccheck

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testFunc is a test, benchmark, example or fuzz target as a _test.go file declares it.
var testFunc = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Example|Fuzz)[A-Za-z0-9_]*)\(`)

// definedTests returns the name of every test, benchmark, example and fuzz target
// declared in a _test.go file of the repository, its other modules (parity/, bench/…)
// included.
func definedTests(t *testing.T) map[string]bool {
	t.Helper()
	defined := map[string]bool{}
	require.NoError(t, filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != repoRoot || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(src), -1) {
			defined[m[1]] = true
		}
		return nil
	}))
	require.NotEmpty(t, defined)
	return defined
}

// namedTest is a code span that is a test's or a benchmark's name and nothing else.
var namedTest = regexp.MustCompile("`((?:Test|Benchmark)[A-Z][A-Za-z0-9_]*)`")

// TestEveryTestAPageNamesExists: a test or benchmark a page names as the evidence of
// a claim (`TestX`, `BenchmarkX`, in a code span of its own) is declared somewhere in
// the repository, so a renamed or deleted test leaves no page citing it.
func TestEveryTestAPageNamesExists(t *testing.T) {
	defined := definedTests(t)
	named := 0
	for _, page := range pages(t) {
		for i, line := range strings.Split(read(t, page), "\n") {
			for _, m := range namedTest.FindAllStringSubmatch(line, -1) {
				named++
				assert.True(t, defined[m[1]], "%s:%d names %s, which no _test.go file declares", page, i+1, m[1])
			}
		}
	}
	require.NotZero(t, named, "no page names a test any more")
	t.Logf("%d test names checked", named)
}

// slug is the anchor GitHub gives a heading: lower case, only letters, digits,
// hyphens and underscores kept, spaces to hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(linkText.ReplaceAllString(heading, "$1")) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// differenceRows returns the rows of a page's difference tables — those whose header
// starts "| setting |", as parity/exceptions_test.go's tableRows reads them — as
// "section anchor\x00first cell" → section heading.
func differenceRows(t *testing.T, page string) map[string]string {
	t.Helper()
	rows := map[string]string{}
	section, inTable := "", false
	for _, line := range strings.Split(read(t, page), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = h
			continue
		}
		switch {
		case strings.HasPrefix(line, "| setting |"):
			inTable = true
		case !strings.HasPrefix(line, "|"):
			inTable = false
		case inTable && !strings.HasPrefix(line, "|---"):
			first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
			rows[slug(section)+"\x00"+first] = section
		}
	}
	require.NotEmpty(t, rows, "%s has no table of differences", page)
	return rows
}

var (
	// indexLink is the index's first cell: the row's first cell, linked to its section.
	indexLink = regexp.MustCompile(`^\[(.+)\]\(((?:parity\.md)?)#([a-z0-9_-]+)\)$`)
	// exceptionFile is the index's second cell: the file of parity/ that registers it.
	exceptionFile = regexp.MustCompile("^`([a-z_]+_test\\.go)`$")
)

// TestTheIndexOfKeptDifferencesHasEveryRowAndItsException: docs/defaults.md's index
// of every difference we keep has one row per row of the difference tables of
// docs/defaults.md and docs/parity.md, each linked to the section that holds it; the
// file it names in parity/ registers that row's exception (which
// TestDeliberateDifferences runs); and each unit test it names exists.
func TestTheIndexOfKeptDifferencesHasEveryRowAndItsException(t *testing.T) {
	const index = "docs/defaults.md"
	want := map[string]map[string]string{
		"docs/defaults.md": differenceRows(t, "docs/defaults.md"),
		"docs/parity.md":   differenceRows(t, "docs/parity.md"),
	}
	defined := definedTests(t)
	seen := map[string]bool{}
	inIndex := false
	rows := 0
	for i, line := range strings.Split(read(t, index), "\n") {
		switch {
		case strings.HasPrefix(line, "| kept difference |"):
			inIndex = true
			continue
		case !strings.HasPrefix(line, "|"):
			inIndex = false
		}
		if !inIndex || strings.HasPrefix(line, "|---") {
			continue
		}
		rows++
		where := fmt.Sprintf("%s:%d", index, i+1)
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if !assert.Len(t, cells, 3, "%s: want three cells", where) {
			continue
		}
		link := indexLink.FindStringSubmatch(cells[0])
		if !assert.NotNil(t, link, "%s: the first cell is not [first cell](#section) or [first cell](parity.md#section): %s", where, cells[0]) {
			continue
		}
		setting, page, anchor := link[1], "docs/defaults.md", link[3]
		if link[2] != "" {
			page = "docs/parity.md"
		}
		key := page + "\x00" + anchor + "\x00" + setting
		section, ok := want[page][anchor+"\x00"+setting]
		if !assert.True(t, ok, "%s: %s has no row %q under #%s", where, page, setting, anchor) {
			continue
		}
		assert.False(t, seen[key], "%s: %q is in the index twice", where, setting)
		seen[key] = true

		file := exceptionFile.FindStringSubmatch(cells[1])
		if assert.NotNil(t, file, "%s: the second cell is not one file of parity/: %s", where, cells[1]) {
			src, err := os.ReadFile(filepath.Join(repoRoot, "parity", file[1]))
			if assert.NoError(t, err, where) {
				registration := `exception("` + page + `", "` + section + `", "` + setting + `"`
				assert.True(t, strings.Contains(string(src), registration), "%s: parity/%s does not register %q's exception (no %s)", where, file[1], setting, registration)
			}
		}

		if cells[2] != "—" {
			names := namedTest.FindAllStringSubmatch(cells[2], -1)
			assert.NotEmpty(t, names, "%s: the third cell names no test and is not \"—\"", where)
			for _, n := range names {
				assert.True(t, defined[n[1]], "%s: no _test.go file declares %s", where, n[1])
			}
		}
	}
	require.NotZero(t, rows, "%s has no index table (header \"| kept difference |\") any more", index)
	for page, rows := range want {
		for row := range rows {
			anchor, setting, _ := strings.Cut(row, "\x00")
			assert.True(t, seen[page+"\x00"+anchor+"\x00"+setting], "%s's row %q (#%s) is missing from the index in %s", page, setting, anchor, index)
		}
	}
	t.Logf("%d rows of the index checked", rows)
}
