package parity

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// A deliberate difference: the row of a docs page that states it, and the test that
// shows client-go doing one thing and this module the other.
type deliberate struct {
	page    string // docs/defaults.md for its table rows, docs/parity.md for what the suite found
	section string // the page's "## " heading over the row
	setting string // the row's first cell, as written
	show    func(t *testing.T)
}

var differences []deliberate

// exception registers one deliberate difference; a test file calls it at package level
// (var _ = exception(…)) beside the differential test of the same component.
func exception(page, section, setting string, show func(t *testing.T)) bool {
	differences = append(differences, deliberate{page, section, setting, show})
	return true
}

// TestDeliberateDifferences runs each exception as a subtest named by its row, after
// checking that the row is still on its page: a difference whose row was edited away,
// or renamed, fails here instead of being asserted about nothing.
func TestDeliberateDifferences(t *testing.T) {
	rows := map[string]map[string]bool{}
	for _, d := range differences {
		if rows[d.page] == nil {
			rows[d.page] = tableRows(t, "../"+d.page)
		}
		if !rows[d.page][d.section+"\x00"+d.setting] {
			t.Errorf("%s has no row %q under %q: the exception is about nothing", d.page, d.setting, d.section)
			continue
		}
		t.Run(d.section+"/"+d.setting, d.show)
	}
}

var headingRE = regexp.MustCompile(`^## (.+)$`)

// tableRows returns the first cell of every table row of a page, by its section.
func tableRows(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		if m := headingRE.FindStringSubmatch(line); m != nil {
			section = m[1]
			continue
		}
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "|---") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		rows[section+"\x00"+first] = true
	}
	return rows
}
