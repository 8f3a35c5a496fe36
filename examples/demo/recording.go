package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/trace"
)

// recordingPath is where the tour's controller on pipeline writes its recording in
// dir: demo.jsonl.gz for the default pipeline, demo-classic.jsonl.gz for the
// classic one; "" when dir is "" (no recording).
func recordingPath(dir string, pipeline controller.Pipeline) string {
	if dir == "" {
		return ""
	}
	name := "demo.jsonl.gz"
	if pipeline == controller.ClassicPipeline {
		name = "demo-classic.jsonl.gz"
	}
	return filepath.Join(dir, name)
}

// saveRecording writes events, the trace of the tour's controller on pipeline, to
// path as a recording. It does nothing if path is "".
func saveRecording(path string, pipeline controller.Pipeline, events []trace.Event) error {
	if path == "" {
		return nil
	}
	title := fmt.Sprintf("make demo: foo-controller creates, scales and deletes a Foo's Deployment, on the %s pipeline (%s)", pipeline, pipeline.Describe())
	if pipeline == controller.ClassicPipeline {
		title = fmt.Sprintf("make demo: the same create on the %s pipeline (%s)", pipeline, pipeline.Describe())
	}
	err := trace.SaveRecording(path, trace.RecordingHeader{Program: "demo", Run: string(pipeline), Title: title, Pipeline: pipeline.Layout(demoWorkers)}, events)
	if err != nil {
		return fmt.Errorf("recording the demo: %w", err)
	}
	return nil
}

// checkRecording says what a recording of the tour on pipeline (h and events) lacks,
// or nil: the header describes what reported, the tour's changes are marked, and the
// Foo's create can be followed from its watch event to the worker's sync through the
// pipeline's queue.
func checkRecording(pipeline controller.Pipeline, h trace.RecordingHeader, events []trace.Event) error {
	var errs []error
	if h.Program != "demo" || h.Run != string(pipeline) {
		errs = append(errs, fmt.Errorf("the header names %s %s, want demo %s", h.Program, h.Run, pipeline))
	}
	want := pipeline.Layout(demoWorkers)
	seen := trace.PipelineOf(events)
	seen.Workers = want.Workers
	if !equalPipelines(h.Pipeline, want) || !equalPipelines(seen, want) {
		errs = append(errs, fmt.Errorf("the pipeline is %+v; the header describes %+v, the events show %+v", want, h.Pipeline, seen))
	}
	actions := 0
	for _, e := range events {
		if e.Kind == trace.Action {
			actions++
		}
	}
	wantActions := 3 // POST, PUT, DELETE
	if pipeline == controller.ClassicPipeline {
		wantActions = 2 // POST, DELETE
	}
	if actions != wantActions {
		errs = append(errs, fmt.Errorf("%d actions marked, want %d", actions, wantActions))
	}
	key := demoNamespace + "/" + fooName
	queue := want.Informers[0].Queue
	steps := []struct {
		stage  trace.Stage
		kind   trace.Kind
		source string
	}{
		{trace.Reflector, trace.WatchEvent, "foos"}, {queue, trace.Queued, "foos"}, {queue, trace.Popped, "foos"},
		{trace.Informer, trace.Applied, "foos"}, {trace.Listener, trace.HandlerCalled, "enqueueFoo"},
		{trace.Workqueue, trace.Added, "foos"}, {trace.Workqueue, trace.Got, "foos"}, {trace.Controller, trace.Reconciled, "foos"},
	}
	next := 0
	for _, e := range events {
		if next < len(steps) && e.Key == key && e.Stage == steps[next].stage && e.Kind == steps[next].kind && e.Source == steps[next].source {
			next++
		}
	}
	if next < len(steps) {
		errs = append(errs, fmt.Errorf("the Foo's create stops before %s %s: the recording does not show it reach the worker", steps[next].stage, steps[next].kind))
	}
	return errors.Join(errs...)
}

// equalPipelines compares two pipeline descriptions, the order of their informers
// and handlers aside (which reported first depends on the run).
func equalPipelines(a, b trace.Pipeline) bool {
	sortPipeline(&a)
	sortPipeline(&b)
	return reflect.DeepEqual(a, b)
}

func sortPipeline(p *trace.Pipeline) {
	slices.SortFunc(p.Informers, func(x, y trace.InformerInfo) int { return strings.Compare(x.Source, y.Source) })
	slices.SortFunc(p.Handlers, func(x, y trace.HandlerInfo) int { return strings.Compare(x.Name, y.Name) })
}
