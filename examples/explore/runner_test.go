//go:build !replayonly

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/leaderelection"
	"github.com/kubeinternals/informers/trace"
)

// TestPipelineInfosMatchTheController: every pipeline the controller knows has an
// entry, and the queue the page expects is the one the controller says it runs.
func TestPipelineInfosMatchTheController(t *testing.T) {
	names := map[trace.Stage]string{trace.RealFIFO: "RealFIFO", trace.DeltaFIFO: "DeltaFIFO"}
	for _, p := range controller.Pipelines {
		info, ok := pipelineInfos[p]
		require.True(t, ok, "pipelineInfos has no entry for %q", p)
		assert.True(t, strings.HasPrefix(p.Describe(), names[info.Queue]+" fed by"), "%s: %q runs a %s", p, p.Describe(), names[info.Queue])
	}
	assert.Equal(t, "RealFIFO fed by a watch-list (client-go 1.37 default)", labelOf(controller.DefaultPipeline, 1).Text)
	assert.Equal(t, "DeltaFIFO fed by a paged LIST (the classic one most write-ups describe)", labelOf(controller.ClassicPipeline, 1).Text)
}

func TestParsePipeline(t *testing.T) {
	for _, p := range controller.Pipelines {
		got, err := parsePipeline(string(p))
		require.NoError(t, err)
		assert.Equal(t, p, got)
	}
	for _, bad := range []string{"", "fast", "Classic", "deltafifo"} {
		_, err := parsePipeline(bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), `"default" (RealFIFO fed by a watch-list) or "classic" (DeltaFIFO fed by a paged LIST)`, bad)
	}
}

func TestRunnerSwitchesTheControllerBetweenPipelines(t *testing.T) {
	h := testHub(1000)
	r, runs := newFakeRunner(t, h)
	require.NoError(t, r.begin(controller.DefaultPipeline))
	require.NoError(t, r.current().awaitSynced(t.Context()))
	s := h.snapshot()
	assert.Equal(t, "default", s.Pipeline.Name)
	assert.Equal(t, 1, s.Pipeline.Run)
	foos := s.Informers[0]
	assert.Equal(t, "realfifo", foos.Queue.Kind)
	assert.Equal(t, "watch-list", foos.Reflector.FilledBy)
	assert.Equal(t, 1, foos.Queue.Replaces)

	from, err := r.switchTo(t.Context(), controller.ClassicPipeline)
	require.NoError(t, err)
	assert.Equal(t, controller.DefaultPipeline, from)
	assert.Equal(t, []string{"start default", "end default", "start classic"}, runs.Log(),
		"the old controller had returned before the new one started")
	s = h.snapshot()
	assert.Equal(t, "classic", s.Pipeline.Name)
	assert.Equal(t, 2, s.Pipeline.Run)
	foos = s.Informers[0]
	assert.Equal(t, "deltafifo", foos.Queue.Kind)
	assert.Equal(t, "LIST", foos.Reflector.FilledBy)
	assert.Equal(t, 1, foos.Reflector.Lists, "the counts are the new controller's alone")
	assert.Equal(t, 1, foos.Queue.Replaces, "the counts are the new controller's alone")

	t.Run("the mark in the stream separates the two controllers' events", func(t *testing.T) {
		events, _ := h.since(0, 1000)
		var order []string
		for _, e := range events {
			switch {
			case e.Stage == explorerStage:
				order = append(order, "mark "+e.Type)
			case e.Kind == trace.Replaced:
				order = append(order, string(e.Stage))
			}
		}
		assert.Equal(t, []string{"mark default", "realfifo", "mark classic", "deltafifo"}, order)
	})
	t.Run("switching to the pipeline that runs changes nothing", func(t *testing.T) {
		from, err := r.switchTo(t.Context(), controller.ClassicPipeline)
		require.NoError(t, err)
		assert.Equal(t, controller.ClassicPipeline, from)
		assert.Len(t, runs.Log(), 3)
		assert.Equal(t, 2, h.snapshot().Pipeline.Run)
	})
	t.Run("switches asked for at once run one at a time: never two controllers", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 6 {
			// Goroutines owned by the test: one switch each; the test waits for them.
			wg.Go(func() {
				_, err := r.switchTo(t.Context(), controller.Pipelines[i%2])
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		assert.Equal(t, 1, runs.Overlap())
		log := runs.Log()
		for i, what := range log {
			if strings.HasPrefix(what, "start") && i > 0 {
				assert.True(t, strings.HasPrefix(log[i-1], "end"), "before %q (#%d) the previous controller ended: %v", what, i, log)
			}
		}
		assert.Equal(t, string(r.settled()), h.snapshot().Pipeline.Name, "the page names the pipeline that runs")
	})
	t.Run("stop ends the controller and refuses switches after it", func(t *testing.T) {
		require.NoError(t, r.stop())
		log := runs.Log()
		assert.True(t, strings.HasPrefix(log[len(log)-1], "end"), "%v", log)
		_, err := r.switchTo(t.Context(), controller.DefaultPipeline)
		require.ErrorIs(t, err, errStopping)
		require.ErrorIs(t, r.begin(controller.DefaultPipeline), errStopping)
		assert.Equal(t, log, runs.Log(), "no controller started after stop")
	})
}

func TestRunnerKeepsTheOldControllerWhenTheNewOneCannotBeBuilt(t *testing.T) {
	h := testHub(100)
	r, runs := newFakeRunner(t, h)
	require.NoError(t, r.begin(controller.DefaultPipeline))
	require.NoError(t, r.current().awaitSynced(t.Context()))
	runs.setBuildErr(errors.New("bad options"))
	_, err := r.switchTo(t.Context(), controller.ClassicPipeline)
	require.ErrorContains(t, err, "bad options")
	assert.Equal(t, []string{"start default"}, runs.Log(), "the old controller still runs")
	assert.Equal(t, "default", h.snapshot().Pipeline.Name)
	assert.Equal(t, 1, h.snapshot().Informers[0].Queue.Replaces, "its boxes were not reset")

	runs.setBuildErr(nil)
	_, err = r.switchTo(t.Context(), controller.ClassicPipeline)
	require.NoError(t, err)
	assert.Equal(t, "classic", h.snapshot().Pipeline.Name)
}

func TestASwitchWaitsForTheNewCaches(t *testing.T) {
	t.Run("a switch whose caches do not fill in time says so, and the new controller goes on", func(t *testing.T) {
		r, runs := newFakeRunner(t, testHub(100))
		require.NoError(t, r.begin(controller.DefaultPipeline))
		runs.setNeverSync(true)
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		_, err := r.switchTo(ctx, controller.ClassicPipeline)
		require.ErrorContains(t, err, "foo-controller runs the classic pipeline, but its caches have not synced yet")
		assert.Equal(t, controller.ClassicPipeline, r.settled())
	})
	t.Run("stop ends a switch that waits for caches, and the controller it started", func(t *testing.T) {
		r, runs := newFakeRunner(t, testHub(100))
		require.NoError(t, r.begin(controller.DefaultPipeline))
		runs.setNeverSync(true)
		switched := make(chan error, 1)
		// Goroutine owned by the test: a switch whose caches never fill; stop ends it,
		// and the test waits for its result below.
		go func() {
			_, err := r.switchTo(context.Background(), controller.ClassicPipeline)
			switched <- err
		}()
		require.Eventually(t, func() bool { return len(runs.Log()) == 3 }, 10*time.Second, time.Millisecond, "the classic controller started")
		require.NoError(t, r.stop())
		select {
		case err := <-switched:
			require.ErrorContains(t, err, "it stopped before its caches synced")
		case <-time.After(10 * time.Second):
			t.Fatal("the switch did not end with stop")
		}
		assert.Equal(t, []string{"start default", "end default", "start classic", "end classic"}, runs.Log())
	})
}

func TestStartPipelineResetsTheBoxesAndMarksTheStream(t *testing.T) {
	h := testHub(100)
	h.startPipeline(labelOf(controller.DefaultPipeline, 1), "")
	s := h.snapshot()
	assert.Equal(t, pipelineLabel{Name: "default", Text: "RealFIFO fed by a watch-list (client-go 1.37 default)", Queue: "realfifo", Run: 1}, s.Pipeline)
	assert.Equal(t, "realfifo", s.Informers[0].Queue.Kind, "the queue box names its queue before its first event")

	h.Record(trace.Event{Stage: trace.RealFIFO, Kind: trace.Queued, Source: "foos", Key: "explore/demo", QueueLen: 1})
	h.Record(added("explore/demo"))
	h.Record(trace.Event{Stage: trace.Listener, Kind: trace.HandlerCalled, Source: "enqueueFoo", Key: "explore/demo"})
	s = h.snapshot()
	require.Equal(t, 1, s.Informers[0].Queue.Queued)
	require.Equal(t, 1, s.Workqueue.Adds)

	h.startPipeline(labelOf(controller.ClassicPipeline, 2), controller.DefaultPipeline)
	s = h.snapshot()
	assert.Equal(t, "classic", s.Pipeline.Name)
	assert.Equal(t, 2, s.Pipeline.Run)
	assert.Equal(t, []informerBox{{Resource: "foos", Reflector: reflectorBox{Phase: "—"}, Queue: queueBox{Kind: "deltafifo"}}}, s.Informers,
		"the informer's boxes start from zero, its queue box a DeltaFIFO's")
	assert.Equal(t, workqueueBox{}, s.Workqueue, "so does the workqueue")
	assert.Equal(t, []handlerBox{{Name: "enqueueFoo", Informer: "foos"}}, s.Handlers, "and the handler, still drawn under its informer")
	assert.Equal(t, workersBox{Workers: 2}, s.Workers)
	assert.Equal(t, uint64(5), s.Events, "the journey stream keeps every event: two marks and three events")

	events, _ := h.since(0, 100)
	mark := events[len(events)-1]
	assert.Equal(t, explorerStage, mark.Stage)
	assert.Equal(t, pipelineStarted, mark.Kind)
	assert.Equal(t, "classic", mark.Type)
	assert.Equal(t, wireEvent{Seq: 5, T: mark.Time.UnixMilli(), Stage: "explorer", Kind: "pipeline started", Source: "explorer",
		Text: "pipeline started: foo-controller on the classic pipeline: DeltaFIFO fed by a paged LIST (the classic one most write-ups describe), replacing the default one; the boxes start from zero"},
		toWire(mark), "the timeline says what happened; the mark lights no box")
	assert.Equal(t, "pipeline started: foo-controller on the default pipeline: RealFIFO fed by a watch-list (client-go 1.37 default)", events[0].Event.String())
}

func TestJourneyShowsWhereThePipelineChanged(t *testing.T) {
	h := testHub(100)
	queued := func(stage trace.Stage, key string) trace.Event {
		return trace.Event{Stage: stage, Kind: trace.Queued, Source: "foos", Key: key, QueueLen: 1}
	}
	h.startPipeline(labelOf(controller.DefaultPipeline, 1), "")
	h.Record(queued(trace.RealFIFO, "explore/demo"))
	h.Record(queued(trace.RealFIFO, "explore/gone"))
	h.startPipeline(labelOf(controller.ClassicPipeline, 2), controller.DefaultPipeline)
	h.Record(queued(trace.DeltaFIFO, "explore/demo"))
	h.startPipeline(labelOf(controller.DefaultPipeline, 3), controller.ClassicPipeline)

	events, boxes := h.journey("foos", "explore/demo")
	var got []string
	for _, e := range events {
		got = append(got, string(e.Stage)+" "+string(e.Kind)+" "+e.Type)
	}
	assert.Equal(t, []string{"realfifo queued ", "explorer pipeline started classic", "deltafifo queued "}, got,
		"the mark between the key's events is in its journey; the marks before its first and after its last are not")
	assert.Equal(t, []string{"queue:foos"}, boxes)

	events, _ = h.journey("foos", "explore/gone")
	assert.Len(t, events, 1, "a key with no event after a switch has no mark")
}

// A stop that ends the lease (leaderelection's S4: the stop came while a renewal
// round was failing) is the replica's own normal end: stop returns nil and logs it at
// info level, not as a warning. Any other error of the run is stop's error.
func TestAStopThatEndsTheLeaseIsANormalEnd(t *testing.T) {
	var logs strings.Builder
	runs := &fakeRuns{hub: testHub(64), endErr: fmt.Errorf("renewal round failing at the stop: %w", leaderelection.ErrLeaseLost)}
	r := newRunner(context.Background(), runs.hub, runs.build, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, r.begin(controller.DefaultPipeline))
	require.NoError(t, r.stop())
	assert.Contains(t, logs.String(), "level=INFO msg=\"foo-controller stopped; its lease ended with the stop")
	assert.NotContains(t, logs.String(), "level=WARN")
	assert.NotContains(t, logs.String(), "level=ERROR")

	failed := errors.New("informer could not start")
	runs = &fakeRuns{hub: testHub(64), endErr: failed}
	r = newRunner(context.Background(), runs.hub, runs.build, slog.New(slog.DiscardHandler))
	require.NoError(t, r.begin(controller.DefaultPipeline))
	assert.ErrorIs(t, r.stop(), failed)
}
