package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/examples/internal/steptest"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
	"github.com/kubeinternals/informers/trace"
)

func TestDemoTourObservesEveryStep(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Profile: testenv.Cluster})
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	var out, journeys steptest.Buffer
	log := slog.New(slog.NewTextHandler(&out, nil))

	record := t.TempDir()
	require.NoError(t, fooTour(ctx, log, &journeys, env.Config, record))
	text := out.String()
	t.Logf("demo narration:\n%s", text)
	t.Logf("demo journeys:\n%s", journeys.String())

	for _, step := range []string{
		"step 1: CRD installed and Established",
		"step 2: foo-controller running",
		"step 3: created Foo",
		"step 4: the controller created the Deployment, owned by the Foo",
		"step 4: traced the Foo's create through every stage",
		`step 5: Foo status.availableReplicas reached spec.replicas" availableReplicas=1`,
		"step 6: scaled the Foo to 3 replicas",
		"step 6: traced the scale-up, and a Deployment status change",
		`step 6: Foo status.availableReplicas reached spec.replicas" availableReplicas=3`,
		"step 7: traced the Foo's deletion to its handler",
		"step 7: the Deployment is gone",
		"step 8: controller stopped",
		`step 9: foo-controller restarted on the classic pipeline, chosen by name`,
		`step 9: traced the same create through the classic pipeline: deltafifo where the default has realfifo" foos="cache filled by a list, queue deltafifo"`,
		"step 10: classic controller stopped",
	} {
		assert.Contains(t, text, step)
	}
	assert.Contains(t, text, `step 4: traced the Foo's create through every stage, from its watch event to the worker's sync" foos="cache filled by a watch-list, queue realfifo"`,
		"the default pipeline is client-go 1.37's")
	assert.Regexp(t, `(?s)step 7: the Deployment is gone.*step 8: controller stopped.*step 9.*step 10: classic controller stopped`, text, "each controller stops after its last step")
	assert.NotContains(t, text, "level=ERROR")
	for _, p := range controller.Pipelines {
		h, events, err := trace.OpenRecording(recordingPath(record, p))
		require.NoError(t, err)
		assert.NoError(t, checkRecording(p, h, events), "the %s pipeline's recording", p)
	}

	blocks := strings.Split(journeys.String(), "\njourney of ")
	require.Len(t, blocks, 6, "the legend, then four journeys on the default pipeline and one on the classic")
	assert.Contains(t, blocks[0], "reflector   watch-list (or LIST) and WATCH", "the legend names the stages")
	key := demoNamespace + "/" + fooName
	// Each line: offset, stage, component, what it did.
	line := func(stage, component, what string) string {
		return `\n *\+[0-9.]+ms  ` + stage + ` +` + component + ` +` + what
	}
	fooToWorker := func(queue, watchType, delta, action string) []string {
		queued := `queued ` + delta + ` ` + key + ` rv=[0-9]+ \(queue [0-9]+\)`
		if queue == "deltafifo" {
			queued = `queued ` + delta + ` ` + key + ` rv=[0-9]+ \([0-9]+ deltas? pending, queue [0-9]+\)`
		}
		return []string{
			line("reflector", "foos", "watch event "+watchType+" "+key+" rv=[0-9]+"),
			line(queue, "foos", queued),
			line(queue, "foos", "popped "+key+" with [0-9]+ deltas?"),
			line("informer", "foos", "applied "+action+" "+key+" rv=[0-9]+ to the indexer"),
			line("informer", "foos", "fanned out "+action+" "+key+" to 1 handler"),
			line("listener", "enqueueFoo", "buffered "+action+" "+key),
			line("listener", "enqueueFoo", "handler called "+action+" "+key),
		}
	}
	worker := []string{
		line("workqueue", "foos", "added "+key+": "),
		line("workqueue", "foos", "got "+key+" after [0-9.]+ms in the queue"),
		line("controller", "foos", "reconciled "+key+" after [0-9.]+ms, ok"),
		line("workqueue", "foos", "done "+key),
	}
	for i, want := range []struct {
		title string
		lines []string
	}{
		{"the Foo's create", append(fooToWorker("realfifo", "ADDED", "Added", "add"), worker...)},
		{"the Foo's scale-up", append(fooToWorker("realfifo", "MODIFIED", "Updated", "update"), worker...)},
		{"a Deployment status change", append([]string{
			line("reflector", "deployments", "watch event MODIFIED "+key),
			line("realfifo", "deployments", "queued Updated "+key),
			line("realfifo", "deployments", "popped "+key),
			line("informer", "deployments", "applied update "+key),
			line("informer", "deployments", "fanned out update "+key+" to 1 handler"),
			line("listener", "handleDeployment", "buffered update "+key),
			line("listener", "handleDeployment", "handler called update "+key),
			line("controller", "deployments", "mapped deployments "+key+" to key "+key),
		}, worker...)},
		{"the Foo's deletion", append(fooToWorker("realfifo", "DELETED", "Deleted", "delete"),
			line("listener", "enqueueFoo", "handler returned delete "+key+" after [0-9.]+ms"))},
		{"the same create through the classic pipeline", append(fooToWorker("deltafifo", "ADDED", "Added", "add"), worker...)},
	} {
		block := blocks[i+1]
		assert.True(t, strings.HasPrefix(block, want.title), "journey %d is %s: %q", i+1, want.title, block)
		assert.Regexp(t, "(?s)"+strings.Join(want.lines, ".*"), block, "%s: every stage, in order", want.title)
		stages := "stages passed: reflector → realfifo → informer → listener → workqueue → controller\n"
		switch want.title {
		case "a Deployment status change": // the handler maps before it adds
			stages = "stages passed: reflector → realfifo → informer → listener → controller → workqueue\n"
		case "the Foo's deletion":
			stages = "stages passed: reflector → realfifo → informer → listener\n"
		case "the same create through the classic pipeline":
			stages = "stages passed: reflector → deltafifo → informer → listener → workqueue → controller\n"
		}
		assert.Contains(t, block, stages)
	}
}
