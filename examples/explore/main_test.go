//go:build !replayonly

package main

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPipelineFlag: -pipeline takes a pipeline's name, and a wrong one stops the
// explorer before it listens or starts a cluster.
func TestPipelineFlag(t *testing.T) {
	err := run(t.Context(), slog.New(slog.NewTextHandler(io.Discard, nil)), "127.0.0.1:0", "fast")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `-pipeline: pipeline "fast" must be "default" (RealFIFO fed by a watch-list) or "classic" (DeltaFIFO fed by a paged LIST)`)
}
