package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/internal/cluster"
)

func TestEveryScenarioIsNamedDescribedAndRunnable(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range scenarios() {
		assert.NotEmpty(t, s.Name)
		assert.False(t, seen[s.Name], "duplicate name %s", s.Name)
		seen[s.Name] = true
		assert.True(t, strings.HasSuffix(s.Question, "?"), "%s: a question ends with ?", s.Name)
		assert.NotEmpty(t, s.Why, s.Name)
		assert.NotEmpty(t, s.Read, "%s links to where it is explained", s.Name)
		assert.NotNil(t, s.Run, s.Name)
	}
}

func TestSelectScenariosKeepsTheGivenOrderAndRejectsUnknownNames(t *testing.T) {
	all := scenarios()
	require.GreaterOrEqual(t, len(all), 2)
	got, err := selectScenarios([]string{all[1].Name, all[0].Name})
	require.NoError(t, err)
	assert.Equal(t, []string{all[1].Name, all[0].Name}, []string{got[0].Name, got[1].Name})

	_, err = selectScenarios([]string{"no-such-scenario"})
	assert.ErrorContains(t, err, `no scenario "no-such-scenario"`)

	got, err = selectScenarios(nil)
	require.NoError(t, err)
	assert.Len(t, got, len(all))
}

func TestAFaultScenarioIsSkippedOnAClusterWithoutFaults(t *testing.T) {
	ran := false
	s := Scenario{Name: "x", Fault: "cuts connections", Run: func(context.Context, *Lab) (*Report, error) {
		ran = true
		return &Report{}, nil
	}}
	res := run(t.Context(), &Lab{Cluster: &cluster.Cluster{}}, s)
	assert.False(t, ran)
	assert.Contains(t, res.skipped, "cuts connections needs the local control plane")
	assert.True(t, res.passed(), "a skip is not a failure")
}

func TestTheTableMarksEachOutcome(t *testing.T) {
	ok := &Report{Answer: "yes | no", Checks: []Check{{Claim: "a", OK: true}}}
	bad := &Report{Answer: "maybe", Checks: []Check{{Claim: "a", OK: true}, {Claim: "b", OK: false}}}
	none := &Report{Answer: "nothing checked"}
	var b strings.Builder
	writeTable(&b, []result{
		{scenario: Scenario{Name: "ok", Question: "Q1?"}, report: ok},
		{scenario: Scenario{Name: "bad", Question: "Q2?"}, report: bad},
		{scenario: Scenario{Name: "none", Question: "Q3?"}, report: none},
		{scenario: Scenario{Name: "skip", Question: "Q4?"}, skipped: "needs faults"},
		{scenario: Scenario{Name: "err", Question: "Q5?"}, err: assert.AnError},
	})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 7)
	assert.Equal(t, `| ok | Q1? | yes \| no | ✓ |`, lines[2])
	assert.Equal(t, `| bad | Q2? | maybe | ✗ |`, lines[3])
	assert.Equal(t, `| none | Q3? | nothing checked | ✗ |`, lines[4], "a report with no checks observed nothing")
	assert.Equal(t, `| skip | Q4? | skipped: needs faults | – |`, lines[5])
	assert.Contains(t, lines[6], "could not run")
	assert.True(t, strings.HasSuffix(lines[6], "✗ |"))
}

func TestAReportPrintsItsFourParts(t *testing.T) {
	s := Scenario{Name: "n", Question: "Q?", Why: "because", Read: []string{"docs/x.md"}}
	r := &Report{}
	r.Do("POST %s", "a")
	r.See("saw %d", 3)
	r.Check("claim", true, "got %d", 1)
	r.Answer = "A"
	var b strings.Builder
	s.print(&b, r)
	out := b.String()
	for _, want := range []string{"Question\n  Q?", "What we do\n  • POST a", "What we saw\n  saw 3\n  ✓ claim (got 1)", "Answer\n  A", "Why\n  because\n  → docs/x.md"} {
		assert.Contains(t, out, want)
	}
}

func TestDocsLabIsGeneratedFromTheScenarios(t *testing.T) {
	var want strings.Builder
	writeDocs(&want)
	got, err := os.ReadFile("../../docs/lab.md")
	require.NoError(t, err)
	assert.Equal(t, want.String(), string(got), "docs/lab.md is stale: run `go run ./examples/lab -docs > docs/lab.md`")
}

// goSymbol matches "file.go: Symbol" in a Read entry.
var goSymbol = regexp.MustCompile(`([a-z0-9_/.-]+\.go): ([A-Za-z_.]+)`)

func TestEveryReadLinkNamesAFileAndFunctionThatExist(t *testing.T) {
	for _, s := range scenarios() {
		for _, entry := range s.Read {
			for _, p := range repoPath.FindAllString(entry, -1) {
				_, err := os.Stat("../../" + p)
				assert.NoError(t, err, "%s: %q links to a missing file", s.Name, entry)
			}
			for _, m := range goSymbol.FindAllStringSubmatch(entry, -1) {
				src, err := os.ReadFile("../../" + m[1])
				if !assert.NoError(t, err, s.Name) {
					continue
				}
				name := m[2][strings.LastIndex(m[2], ".")+1:]
				assert.Regexp(t, `(?m)^(func|type|var|const)\b.*\b`+name+`\b`, string(src), "%s: %s has no %s", s.Name, m[1], m[2])
			}
		}
	}
}

func TestTheBooksLabLinksNameScenarios(t *testing.T) {
	names := map[string]bool{}
	for _, s := range scenarios() {
		names[s.Name] = true
	}
	files, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	links := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range regexp.MustCompile(`lab\.md#([a-z0-9-]+)`).FindAllStringSubmatch(string(src), -1) {
			links++
			assert.True(t, names[m[1]], "%s links to lab scenario %q, which does not exist", filepath.Base(f), m[1])
		}
	}
	assert.Positive(t, links, "the chapters and the FAQ link to the lab")
}
