package main

import (
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/internal/cluster"
	"github.com/kubeinternals/informers/examples/internal/steptest"
	"github.com/kubeinternals/informers/trace"
)

// quotedIn names the page that quotes a scenario's output, in the fenced block after
// the line "<!-- lab:NAME -->": each line of it must match a line the run printed, in
// order ("…" stands for any text, a resourceVersion for any other).
var quotedIn = map[string]string{
	"watch-wire": "../../docs/03-reflector.md",
}

// TestIntegrationLab runs every scenario on one local cluster, as `make lab` does, and
// asserts each claim its answer makes. One subtest per scenario:
//
//	go test ./examples/lab -run 'TestIntegrationLab/watch-cut' -v
func TestIntegrationLab(t *testing.T) {
	c := cluster.ForTest(t, cluster.Options{APIServerFlags: labAPIServerFlags})
	lines := &logLines{}
	lab := &Lab{Cluster: c, log: lines.logger(slog.NewTextHandler(io.Discard, nil), slog.LevelInfo), lines: lines, recordDir: t.TempDir()}
	require.NoError(t, lab.prepare(t.Context()))

	var results []result
	for _, s := range scenarios() {
		t.Run(s.Name, func(t *testing.T) {
			res := run(t.Context(), lab, s)
			results = append(results, res)
			require.Empty(t, res.skipped, "the local cluster can inject every fault")
			require.NoError(t, res.err)
			var out strings.Builder
			s.print(&out, res.report)
			t.Log(out.String())
			assert.NotEmpty(t, res.report.Did, "What we do")
			assert.NotEmpty(t, res.report.Saw, "What we saw")
			assert.NotEmpty(t, res.report.Answer, "the answer")
			require.NotEmpty(t, res.report.Checks, "a scenario asserts what it observed")
			for _, c := range res.report.Checks {
				assert.True(t, c.OK, "%s — measured: %s", c.Claim, c.Got)
			}
			// A chapter that quotes the scenario's output quotes what this run printed.
			if page, ok := quotedIn[s.Name]; ok {
				steptest.AssertSampleInOrder(t, steptest.Sample(t, page, "<!-- lab:"+s.Name+" -->"), out.String())
			}
			// The run's recording, read back from its file, shows what the answer claims.
			_, events, err := trace.OpenRecording(filepath.Join(lab.recordDir, s.Name+".jsonl.gz"))
			require.NoError(t, err)
			rc := s.Recorded(events)
			assert.True(t, rc.OK, "recording: %s — it shows: %s", rc.Claim, rc.Got)
		})
	}
	var table strings.Builder
	writeTable(&table, results)
	t.Log(table.String())
}
