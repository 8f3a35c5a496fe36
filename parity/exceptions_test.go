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
// or renamed, fails here instead of being asserted about nothing. Then it checks the
// other direction: every row of docs/parity.md's table is asserted, and every row of
// docs/defaults.md's tables is asserted or listed in docs/parity.md under
// pendingSection, whose list must name exactly the rows still without an exception.
func TestDeliberateDifferences(t *testing.T) {
	pages := map[string]map[string]bool{}
	asserted := map[string]bool{}
	for _, d := range differences {
		if pages[d.page] == nil {
			pages[d.page] = tableRows(t, "../"+d.page)
		}
		row := d.page + "\x00" + d.section + "\x00" + d.setting
		if !pages[d.page][d.section+"\x00"+d.setting] {
			t.Errorf("%s has no row %q under %q: the exception is about nothing", d.page, d.setting, d.section)
			continue
		}
		if asserted[row] {
			t.Errorf("%s: row %q under %q has two exceptions", d.page, d.setting, d.section)
		}
		asserted[row] = true
		t.Run(d.section+"/"+d.setting, d.show)
	}

	for row := range tableRows(t, "../docs/parity.md") {
		if !asserted["docs/parity.md\x00"+row] {
			t.Errorf("docs/parity.md: row %q has no exception test", strings.ReplaceAll(row, "\x00", " / "))
		}
	}
	pending := pendingRows(t, "../docs/parity.md")
	for row := range tableRows(t, "../docs/defaults.md") {
		switch key := "docs/defaults.md\x00" + row; {
		case asserted[key] && pending[row]:
			t.Errorf("docs/parity.md lists %q as not yet asserted, but it has an exception: drop it from the list", row)
		case !asserted[key] && !pending[row]:
			t.Errorf("docs/defaults.md: row %q has no exception test and is not listed in docs/parity.md's %q", strings.ReplaceAll(row, "\x00", " / "), pendingSection)
		}
		delete(pending, row)
	}
	for row := range pending {
		t.Errorf("docs/parity.md's %q lists %q, which is no row of docs/defaults.md", pendingSection, strings.ReplaceAll(row, "\x00", " / "))
	}
}

// pendingSection is the heading in docs/parity.md over the defaults rows whose
// component's exceptions have not landed yet, one "- Section / setting" bullet each.
const pendingSection = "Defaults not yet asserted"

func pendingRows(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		if m := headingRE.FindStringSubmatch(line); m != nil {
			in = m[1] == pendingSection
			continue
		}
		if item, ok := strings.CutPrefix(line, "- "); ok && in {
			section, setting, ok := strings.Cut(item, " / ")
			if !ok {
				t.Fatalf("%s: %q under %q: want \"- Section / setting\"", path, line, pendingSection)
			}
			rows[section+"\x00"+setting] = true
		}
	}
	return rows
}

var headingRE = regexp.MustCompile(`^## (.+)$`)

// tableRows returns the first cell of every row of the page's difference tables — those
// whose header row starts "| setting |" — by the section they are under.
func tableRows(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	section, inTable := "", false
	for _, line := range strings.Split(string(b), "\n") {
		if m := headingRE.FindStringSubmatch(line); m != nil {
			section = m[1]
			continue
		}
		switch {
		case strings.HasPrefix(line, "| setting |"):
			inTable = true
		case !strings.HasPrefix(line, "|"):
			inTable = false
		case inTable && !strings.HasPrefix(line, "|---"):
			first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
			rows[section+"\x00"+first] = true
		}
	}
	return rows
}
