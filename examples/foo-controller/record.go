package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/trace"
)

// flushEvery is how often -record writes out what it buffered: a crash (SIGKILL, a
// node lost) loses at most this much of the recording. Why this short: the lab kills
// a replica a fraction of a second after it starts leading, and its recording should
// still show that; a flush with nothing buffered costs no write.
const flushEvery = 100 * time.Millisecond

// replicaName names this replica for -record's header (its run), so that recordings
// of several replicas tell which one wrote each. With leader election it is the
// identity the replica's Lease will hold, chosen here (controller.NewIdentity) and set
// on election when empty, so that the header and the Lease agree; without, the
// hostname (the Pod's name in a cluster). "" if the hostname cannot be read: the
// controller then fails to build with that error.
func replicaName(election *controller.LeaderElection) string {
	if election == nil {
		host, _ := os.Hostname()
		return host
	}
	if election.Identity == "" {
		election.Identity, _ = controller.NewIdentity()
	}
	return election.Identity
}

// startRecording makes the tracer of -record: every trace event of this process goes
// to path, a recording the explorer replays (docs/recordings/README.md); so does every
// event given to logs, the sink of the log lines (trace.CaptureLogs). finish flushes
// and closes it, logging any event it lost; call it once, before exiting.
func startRecording(log *slog.Logger, path, run string, pipeline controller.Pipeline, workers int) (tr *trace.Tracer, logs trace.Sink, finish func(), err error) {
	w, err := trace.CreateRecording(path, trace.RecordingHeader{
		Program: "foo-controller", Run: run,
		Title:    fmt.Sprintf("foo-controller on the %s pipeline: %s", pipeline, pipeline.Describe()),
		Pipeline: pipeline.Layout(workers),
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("-record: %w", err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	// Goroutine owned by finish: the periodic flush; finish stops it and waits.
	go func() {
		defer wg.Done()
		t := time.NewTicker(flushEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := w.Flush(); err != nil {
					log.Error("-record: writing the recording failed; its later events are lost", "file", path, "err", err)
					return
				}
			}
		}
	}()
	finish = func() {
		close(done)
		wg.Wait()
		if err := w.Close(); err != nil {
			log.Error("-record: the recording is incomplete", "file", path, "err", err)
			return
		}
		log.Info("recorded this run's trace", "file", path)
	}
	return trace.New(w.Record), w.Record, finish, nil
}

// recordedLogger is log, whose lines also go to logs as trace events, from the lowest
// level log prints (the one -log-level chose) up: the recording keeps what the
// process printed, no more.
func recordedLogger(log *slog.Logger, logs trace.Sink) *slog.Logger {
	level := slog.LevelError
	for _, l := range []slog.Level{slog.LevelWarn, slog.LevelInfo, slog.LevelDebug} {
		if log.Enabled(context.Background(), l) {
			level = l
		}
	}
	return slog.New(trace.CaptureLogs(log.Handler(), "foo-controller", level, logs))
}
