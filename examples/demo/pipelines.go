package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/examples/foo-controller/fooclient"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
)

// demoWorkers is how many workers the tour's controller runs.
const demoWorkers = 2

// startController runs foo-controller in this process, traced into a fresh recorder,
// until stop is called; stop cancels it and returns Run's error once it has returned.
// It returns once the Foo and Deployment informers have synced.
//
// Why wait: a Foo created before the informer's first list or watch-list has finished
// reaches the cache through that initial list, not as a watch event, and the journey
// the demo prints starts at the watch event.
//
// With record set, stop also writes the controller's trace there as a recording
// (docs/recordings/README.md), once the controller has stopped; the recording keeps
// the log lines printed meanwhile through the logger startController returns (the
// tour's and the controller's), at Info and above.
func startController(ctx context.Context, log *slog.Logger, cfg *rest.Config, pipeline controller.Pipeline, record string) (rec *trace.Recorder, recLog *slog.Logger, stop func() error, err error) {
	// Why a bound: the trace of a demo is a few thousand events; a long run on a busy
	// cluster should not grow without limit.
	rec = &trace.Recorder{Max: 200_000}
	if record != "" {
		log = slog.New(trace.CaptureLogs(log.Handler(), "demo", slog.LevelInfo, rec.Record))
	}
	c, err := controller.New(cfg, controller.Options{
		Logger: log.With("component", "foo-controller"), Tracer: trace.New(rec.Record), Pipeline: pipeline, Workers: demoWorkers,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	ctlCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	// Goroutine owned by startController's caller: the controller; stop cancels it and
	// waits for Run to return.
	// The wait ends early when Run does (an error before the caches synced).
	waitCtx, endWait := context.WithCancel(ctlCtx)
	defer endWait()
	go func() {
		done <- c.Run(ctlCtx)
		endWait()
	}()
	stop = func() error {
		cancel()
		if err := <-done; err != nil {
			return fmt.Errorf("controller: %w", err)
		}
		return saveRecording(record, pipeline, rec.Events())
	}
	if err := informer.WaitForCacheSync(waitCtx, c.Foos(), c.Deployments()); err != nil {
		return nil, nil, nil, errors.Join(fmt.Errorf("foo-controller's informers did not sync: %w", err), stop())
	}
	return rec, log, stop, nil
}

// checkPipeline fails unless the foos informer filled its cache the way pipeline
// says (watch-list or LIST) through the queue it says, as the trace shows.
func checkPipeline(rec *trace.Recorder, pipeline controller.Pipeline) (string, error) {
	wantList, wantQueue := "watch-list", trace.RealFIFO
	if pipeline == controller.ClassicPipeline {
		wantList, wantQueue = "list", trace.DeltaFIFO
	}
	list, queue := filledBy(rec.Events(), "foos")
	if list != wantList || queue != wantQueue {
		return "", fmt.Errorf("the %s pipeline should fill the foos cache by %s through %s; the trace shows %q through %q",
			pipeline, wantList, wantQueue, list, queue)
	}
	return fmt.Sprintf("cache filled by a %s, queue %s", list, queue), nil
}

// classicCreate is steps 9–10: the same create through the classic pipeline
// (DeltaFIFO fed by a paged LIST), chosen by name, so the two journeys can be read
// side by side: only the queue's stage and the way the cache was filled differ.
func classicCreate(ctx context.Context, log *slog.Logger, out io.Writer, cfg *rest.Config, foos *fooclient.Client, record string) (err error) {
	rec, log, stop, err := startController(ctx, log, cfg, controller.ClassicPipeline, recordingPath(record, controller.ClassicPipeline))
	if err != nil {
		return err
	}
	defer func() {
		err = errors.Join(err, stop())
		log.Info("step 10: classic controller stopped")
	}()
	log.Info("step 9: foo-controller restarted on the classic pipeline, chosen by name (controller.Options{Pipeline: controller.ClassicPipeline})",
		"pipeline", controller.ClassicPipeline.Describe())
	fooKey := demoNamespace + "/" + fooName
	act := trace.New(rec.Record)
	foo := exampleFoo()
	act.Action("POST Foo "+fooKey+" (replicas 1)", false)
	if foo, err = foos.Foos(demoNamespace).Create(ctx, foo, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("step 9: creating the Foo again: %w", err)
	}
	if err := (journey{
		title: "the same create through the classic pipeline", key: fooKey, source: "foos",
		want:  fromWatchToWorker(trace.DeltaFIFO),
		start: watchEvent("foos", fooKey, "ADDED", foo.ResourceVersion),
	}).await(ctx, rec, out); err != nil {
		return fmt.Errorf("step 9: %w", err)
	}
	how, err := checkPipeline(rec, controller.ClassicPipeline)
	if err != nil {
		return fmt.Errorf("step 9: %w", err)
	}
	log.Info("step 9: traced the same create through the classic pipeline: deltafifo where the default has realfifo", "foos", how)
	act.Action("DELETE Foo "+fooKey, false)
	if err := foos.Foos(demoNamespace).Delete(ctx, fooName, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("step 9: deleting the Foo: %w", err)
	}
	return nil
}

// exampleFoo is the Foo both pipelines create: one replica of a Deployment named
// like it.
func exampleFoo() *v1alpha1.Foo {
	return &v1alpha1.Foo{
		ObjectMeta: metav1.ObjectMeta{Name: fooName},
		Spec:       v1alpha1.FooSpec{DeploymentName: fooName, Replicas: ptr.To[int32](1)},
	}
}
