package parity

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	testNameRE = regexp.MustCompile("`(Test[A-Z][A-Za-z]*)`")
	testFuncRE = regexp.MustCompile(`(?m)^func (Test[A-Z][A-Za-z]*)\(t \*testing\.T\)`)
	breakRowRE = regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\| (.+) \\| `(Test[A-Za-z]+)` \\|$")
)

// TestParityPageNamesTheSuiteAsItIs checks docs/parity.md against this directory: every
// test the page names exists, every differential test is named in its table, and its
// table of breaks lists exactly the files in breaks/, each with the rule and the test
// the file states.
func TestParityPageNamesTheSuiteAsItIs(t *testing.T) {
	page, err := os.ReadFile("../docs/parity.md")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	files, _ := filepath.Glob("*_test.go")
	soak, _ := filepath.Glob("soak/*_test.go")
	for _, f := range append(files, soak...) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range testFuncRE.FindAllStringSubmatch(string(src), -1) {
			defined[m[1]] = true
		}
	}
	named := map[string]bool{}
	for _, m := range testNameRE.FindAllStringSubmatch(string(page), -1) {
		named[m[1]] = true
		if !defined[m[1]] {
			t.Errorf("docs/parity.md names %s, which parity/ does not define", m[1])
		}
	}
	for name := range defined {
		if !named[name] && name != "TestParityPageNamesTheSuiteAsItIs" {
			t.Errorf("parity/ defines %s, which docs/parity.md does not name", name)
		}
	}

	rows := map[string][2]string{}
	for _, m := range breakRowRE.FindAllStringSubmatch(string(page), -1) {
		rows[m[1]] = [2]string{m[2], m[3]}
	}
	breaks, _ := filepath.Glob("breaks/*.break")
	var names []string
	for _, path := range breaks {
		name := strings.TrimSuffix(filepath.Base(path), ".break")
		names = append(names, name)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rule, test := breakHeader(string(raw))
		row, ok := rows[name]
		switch {
		case !ok:
			t.Errorf("docs/parity.md's table of breaks has no row for %s", name)
		case row != [2]string{rule, test}:
			t.Errorf("docs/parity.md says break %s is %q caught by %s; the file says %q caught by %s", name, row[0], row[1], rule, test)
		}
	}
	for name := range rows {
		if !slices.Contains(names, name) {
			t.Errorf("docs/parity.md lists break %s, which breaks/ does not hold", name)
		}
	}
}

// breakHeader returns a .break file's rule (its first comment line) and test.
func breakHeader(raw string) (rule, test string) {
	for _, line := range strings.Split(raw, "\n") {
		switch {
		case strings.HasPrefix(line, "#") && rule == "":
			rule = strings.TrimSpace(strings.TrimPrefix(line, "#"))
		case strings.HasPrefix(line, "test:"):
			test = strings.TrimSpace(strings.TrimPrefix(line, "test:"))
		case line == "--- old":
			return rule, test
		}
	}
	return rule, test
}
