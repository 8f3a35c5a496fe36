package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/trace"
)

// recordingsDir holds the committed recordings, relative to this package.
const recordingsDir = "../../docs/recordings"

// TestTheCommittedRecordingsStillShowWhatTheScenariosClaim reads the recording of
// every scenario in docs/recordings and checks it with the scenario's Recorded. A
// change to what the stages report fails it until `make recordings` writes them
// again.
func TestTheCommittedRecordingsStillShowWhatTheScenariosClaim(t *testing.T) {
	for _, s := range scenarios() {
		t.Run(s.Name, func(t *testing.T) {
			require.NotNil(t, s.Recorded, "every scenario says what its recording must show")
			h, events, err := trace.OpenRecording(filepath.Join(recordingsDir, s.Name+".jsonl.gz"))
			require.NoError(t, err, "make recordings writes it")
			assert.Equal(t, "lab", h.Program)
			assert.Equal(t, s.Name, h.Run)
			assert.Equal(t, s.Question, h.Title)
			assert.NotEmpty(t, events)
			assert.Equal(t, trace.PipelineOf(events), h.Pipeline, "the header describes what reported")
			checkPipeline(t, s, h.Pipeline)
			c := s.Recorded(events)
			assert.True(t, c.OK, "%s — the recording shows: %s", c.Claim, c.Got)
		})
	}
}

// TestEveryRecordingHereBelongsToAScenarioOrTheDemo keeps docs/recordings free of
// files nothing regenerates.
func TestEveryRecordingHereBelongsToAScenarioOrTheDemo(t *testing.T) {
	want := []string{"README.md", "demo.jsonl.gz", "demo-classic.jsonl.gz"}
	for _, s := range scenarios() {
		want = append(want, s.Name+".jsonl.gz")
	}
	entries, err := os.ReadDir(recordingsDir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.True(t, slices.Contains(want, e.Name()), "%s: no scenario of that name, and not the demo's", e.Name())
	}
}

// TestARecordedCheckFailsOnAnotherScenariosRecording makes sure the checks can
// fail: each scenario's Recorded, given the recording of the scenario after it,
// does not hold.
func TestARecordedCheckFailsOnAnotherScenariosRecording(t *testing.T) {
	all := scenarios()
	for i, s := range all {
		other := all[(i+1)%len(all)]
		_, events, err := trace.OpenRecording(filepath.Join(recordingsDir, other.Name+".jsonl.gz"))
		require.NoError(t, err)
		c := s.Recorded(events)
		assert.False(t, c.OK, "%s's check held on %s's recording: %s (%s)", s.Name, other.Name, c.Claim, c.Got)
		assert.NotEmpty(t, strings.TrimSpace(c.Got), "%s's check says what it measured", s.Name)
	}
}
