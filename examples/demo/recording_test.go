package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/trace"
)

// TestTheCommittedDemoRecordingsStillShowTheTour reads docs/recordings/demo*.jsonl.gz
// (make recordings writes them) and checks each with checkRecording.
func TestTheCommittedDemoRecordingsStillShowTheTour(t *testing.T) {
	for _, p := range controller.Pipelines {
		t.Run(string(p), func(t *testing.T) {
			h, events, err := trace.OpenRecording(recordingPath("../../docs/recordings", p))
			require.NoError(t, err)
			assert.NoError(t, checkRecording(p, h, events))
		})
	}
}

// TestCheckRecordingFindsWhatIsMissing: the check fails on the other pipeline's
// recording (another queue stage), and on a recording without the worker's sync.
func TestCheckRecordingFindsWhatIsMissing(t *testing.T) {
	h, events, err := trace.OpenRecording(recordingPath("../../docs/recordings", controller.DefaultPipeline))
	require.NoError(t, err)
	assert.Error(t, checkRecording(controller.ClassicPipeline, h, events))
	var noSync []trace.Event
	for _, e := range events {
		if e.Kind != trace.Reconciled {
			noSync = append(noSync, e)
		}
	}
	assert.ErrorContains(t, checkRecording(controller.DefaultPipeline, h, noSync), "stops before controller reconciled")
}
