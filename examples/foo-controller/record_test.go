package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/trace"
)

// -record's header names the replica that wrote it: with -leader-elect, by the
// identity its Lease holds (the hostname, "_" and a random suffix), which main now
// chooses before the controller is built; without, by its hostname.
func TestTheRecordingHeaderNamesTheReplica(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	for _, c := range []struct {
		name     string
		election *controller.LeaderElection
	}{
		// As main builds it from the flags: no flag sets the identity.
		{"a replica competing for the Lease is named by its Lease identity", &controller.LeaderElection{Namespace: "default", Name: controller.Name}},
		{"a replica without leader election is named by its hostname", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run.jsonl")
			_, _, finish, err := startRecording(slog.New(slog.DiscardHandler), path, replicaName(c.election), controller.DefaultPipeline, 2)
			require.NoError(t, err)
			finish()
			header, _, err := trace.OpenRecording(path)
			require.NoError(t, err)
			if c.election == nil {
				assert.Equal(t, host, header.Run)
				return
			}
			assert.True(t, strings.HasPrefix(header.Run, host+"_"), "%q", header.Run)
			assert.Equal(t, c.election.Identity, header.Run, "the identity the Lease will hold")
		})
	}
}

// -record keeps the log lines the process prints, from -log-level up, as trace events
// among the others.
func TestTheRecordingKeepsTheLinesTheProcessPrints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	tracer, logs, finish, err := startRecording(slog.New(slog.DiscardHandler), path, "replica-a", controller.DefaultPipeline, 2)
	require.NoError(t, err)
	var printed strings.Builder
	log := recordedLogger(slog.New(slog.NewTextHandler(&printed, &slog.HandlerOptions{Level: slog.LevelWarn})), logs)
	log.Info("not printed at -log-level=warn")
	tracer.Action("between the two lines", false)
	log.With("informer", "foos").Warn("watch ended", "reason", "410 Gone")
	finish()
	_, events, err := trace.OpenRecording(path)
	require.NoError(t, err)
	require.Len(t, events, 2, "the action and the one line printed")
	assert.Equal(t, trace.Action, events[0].Kind)
	e := events[1]
	assert.Equal(t, []string{"log", "logged", "foo-controller", "WARN", "watch ended", `informer=foos reason="410 Gone"`},
		[]string{string(e.Stage), string(e.Kind), e.Source, e.Type, e.Detail, e.Attrs})
	assert.Equal(t, 1, strings.Count(printed.String(), "\n"), "printed as before: %s", printed.String())
}
