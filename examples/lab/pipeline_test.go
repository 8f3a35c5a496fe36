package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/trace"
)

// checkPipeline: the informers a scenario's recording shows ran the pipeline its
// Pipeline field (its section of docs/lab.md) states — client-go 1.37's default, a
// RealFIFO fed by a watch-list, when the field is empty; the classic DeltaFIFO and
// paged LIST it names otherwise.
func checkPipeline(t *testing.T, s Scenario, p trace.Pipeline) {
	t.Helper()
	var deltaFIFO, pagedList bool
	for _, inf := range p.Informers {
		classicQueue, classicList := inf.Queue == trace.DeltaFIFO, inf.List == "list"
		if s.Pipeline == "" {
			assert.False(t, classicQueue || classicList,
				"%s states the default pipeline (no Pipeline), but its informer %s ran queue %q, list %q", s.Name, inf.Source, inf.Queue, inf.List)
		}
		deltaFIFO = deltaFIFO || classicQueue
		pagedList = pagedList || classicList
	}
	if strings.Contains(s.Pipeline, "DeltaFIFO") {
		assert.True(t, deltaFIFO, "%s's Pipeline names DeltaFIFO; no informer of its recording ran one", s.Name)
	}
	if strings.Contains(s.Pipeline, "paged LIST") {
		assert.True(t, pagedList, "%s's Pipeline names the paged LIST; no informer of its recording listed so", s.Name)
	}
}

// scenarioLink is a link to a scenario's section of docs/lab.md and the clause after
// it, up to the end of the sentence, a semicolon, or the parenthesis it opens.
var scenarioLink = regexp.MustCompile(`\]\((?:\.\./)*(?:docs/)?lab\.md#([a-z0-9-]+)\)([^.;]*(?:\([^)]*\))?)`)

// TestThePagesStateThePipelineEachScenarioRuns: where a page says which pipeline a
// scenario runs, in the clause after its link ("runs the default pipeline", "chooses
// the classic DeltaFIFO"), it says what the scenario's Pipeline says.
func TestThePagesStateThePipelineEachScenarioRuns(t *testing.T) {
	byName := map[string]Scenario{}
	for _, s := range scenarios() {
		byName[s.Name] = s
	}
	pages, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	pages = append(pages, "../../README.md", "README.md")
	stated := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		require.NoError(t, err)
		text := strings.Join(strings.Fields(string(b)), " ")
		for _, m := range scenarioLink.FindAllStringSubmatch(text, -1) {
			s, ok := byName[m[1]]
			if !ok {
				continue // the page's headings, not a scenario
			}
			clause := m[2]
			switch {
			case strings.Contains(clause, "default pipeline"):
				stated++
				assert.Empty(t, s.Pipeline, "%s says %s runs the default pipeline: %q", page, s.Name, clause)
			case strings.Contains(clause, "DeltaFIFO") || strings.Contains(clause, "classic"):
				stated++
				assert.NotEmpty(t, s.Pipeline, "%s says %s runs the classic pipeline: %q", page, s.Name, clause)
			}
		}
	}
	require.NotZero(t, stated, "no page states a scenario's pipeline any more")
	t.Logf("%d statements of a scenario's pipeline checked", stated)
}
