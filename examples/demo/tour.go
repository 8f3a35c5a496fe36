package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/examples/foo-controller/artifacts"
	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/examples/foo-controller/fooclient"
	"github.com/kubeinternals/informers/examples/internal/crd"
	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/trace"
)

const (
	demoNamespace = "kubeinternals-demo"
	fooName       = "example-foo"
)

// fooTour narrates foo-controller's work on the cluster in cfg. It returns nil only if
// every step was observed, and stops the controller before returning on every path.
//
// Alongside the steps it prints to out the journey of the Foo through every stage of
// the pipeline — for its create, its scale-up and its deletion — and of one Deployment
// status change that maps back to the Foo's key, from a trace of the whole controller;
// then the journey of the same create through the classic pipeline (pipelines.go).
//
// With record set (a directory), each controller's trace is written there as a
// recording: demo.jsonl.gz and demo-classic.jsonl.gz.
func fooTour(ctx context.Context, log *slog.Logger, out io.Writer, cfg *rest.Config, record string) (err error) {
	core, _, err := kube.NewRESTClient(cfg, corev1.SchemeGroupVersion, nil, corev1.AddToScheme)
	if err != nil {
		return err
	}
	apps, _, err := kube.NewRESTClient(cfg, appsv1.SchemeGroupVersion, nil, appsv1.AddToScheme)
	if err != nil {
		return err
	}
	foos, err := fooclient.NewClient(cfg, fooclient.Options{})
	if err != nil {
		return err
	}

	names, err := crd.InstallCRD(ctx, cfg, artifacts.CRD(), crd.Options{})
	if err != nil {
		return fmt.Errorf("step 1: installing the CRD: %w", err)
	}
	log.Info("step 1: CRD installed and Established: the API server now serves Foos", "crds", names)

	if _, err := io.WriteString(out, legend); err != nil {
		return err
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: demoNamespace}}
	if err := core.Post().Resource("namespaces").Body(ns).Do(ctx).Error(); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", demoNamespace, err)
	}
	defer func() {
		// A fresh context: the tour's may have ended. Namespace deletion is asynchronous.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := core.Delete().Resource("namespaces").Name(demoNamespace).Do(cctx).Error(); err != nil && !apierrors.IsNotFound(err) {
			log.Warn("could not delete the demo namespace", "err", err)
		}
	}()
	if err := defaultTour(ctx, log, out, cfg, foos, apps, record); err != nil {
		return err
	}
	return classicCreate(ctx, log, out, cfg, foos, record)
}

// defaultTour is steps 2–8: foo-controller on the default pipeline (client-go
// 1.37's: RealFIFO fed by a watch-list) creates, scales and loses a Foo's
// Deployment, each change traced.
func defaultTour(ctx context.Context, log *slog.Logger, out io.Writer, cfg *rest.Config, foos *fooclient.Client, apps rest.Interface, record string) (err error) {
	rec, log, stop, err := startController(ctx, log, cfg, controller.DefaultPipeline, recordingPath(record, controller.DefaultPipeline))
	if err != nil {
		return err
	}
	defer func() {
		err = errors.Join(err, stop())
		log.Info("step 8: controller stopped (workers finished, informers stopped)")
	}()
	log.Info("step 2: foo-controller running in this process (Foo and Deployment informers, 2 workers), traced",
		"pipeline", controller.DefaultPipeline.Describe())
	fooKey := demoNamespace + "/" + fooName
	queue := trace.RealFIFO

	// The tour's own changes, marked in the trace: a recording shows where they are.
	act := trace.New(rec.Record)
	foo := exampleFoo()
	act.Action("POST Foo "+fooKey+" (replicas 1)", false)
	if foo, err = foos.Foos(demoNamespace).Create(ctx, foo, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("step 3: creating the Foo: %w", err)
	}
	log.Info("step 3: created Foo", "foo", demoNamespace+"/"+fooName, "deploymentName", fooName, "replicas", 1)

	var dep appsv1.Deployment
	if err := poll(ctx, func() (bool, error) {
		err := apps.Get().Namespace(demoNamespace).Resource("deployments").Name(fooName).Do(ctx).Into(&dep)
		return err == nil, err
	}); err != nil {
		return fmt.Errorf("step 4: waiting for the Deployment: %w", err)
	}
	ref := metav1.GetControllerOf(&dep)
	if ref == nil || ref.UID != foo.UID {
		return fmt.Errorf("step 4: Deployment %s has no controller reference to the Foo: %v", dep.Name, dep.OwnerReferences)
	}
	log.Info("step 4: the controller created the Deployment, owned by the Foo",
		"deployment", dep.Name, "ownerKind", ref.Kind, "owner", ref.Name, "replicas", *dep.Spec.Replicas, "image", dep.Spec.Template.Spec.Containers[0].Image)
	if err := (journey{
		title: "the Foo's create", key: fooKey, source: "foos", want: fromWatchToWorker(queue),
		start: watchEvent("foos", fooKey, "ADDED", foo.ResourceVersion),
	}).await(ctx, rec, out); err != nil {
		return fmt.Errorf("step 4: %w", err)
	}
	how, err := checkPipeline(rec, controller.DefaultPipeline)
	if err != nil {
		return fmt.Errorf("step 4: %w", err)
	}
	log.Info("step 4: traced the Foo's create through every stage, from its watch event to the worker's sync", "foos", how)

	if err := waitAvailable(ctx, log, foos, apps, 1, "step 5"); err != nil {
		return err
	}

	var scaledRV string
	act.Action("PUT Foo "+fooKey+" with replicas 3", false)
	if err := poll(ctx, func() (bool, error) {
		f, err := foos.Foos(demoNamespace).Get(ctx, fooName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		f.Spec.Replicas = ptr.To[int32](3)
		if f, err = foos.Foos(demoNamespace).Update(ctx, f, metav1.UpdateOptions{}); err != nil {
			return false, err // a Conflict (the controller wrote status) retries
		}
		scaledRV = f.ResourceVersion
		return true, nil
	}); err != nil {
		return fmt.Errorf("step 6: scaling the Foo: %w", err)
	}
	log.Info("step 6: scaled the Foo to 3 replicas")
	if err := (journey{
		title: "the Foo's scale-up", key: fooKey, source: "foos", want: fromWatchToWorker(queue),
		start: watchEvent("foos", fooKey, "MODIFIED", scaledRV),
	}).await(ctx, rec, out); err != nil {
		return fmt.Errorf("step 6: %w", err)
	}
	if err := waitAvailable(ctx, log, foos, apps, 3, "step 6"); err != nil {
		return err
	}
	// The change that brought the Foo's status to 3 is the last Deployment status
	// update before now: kube-controller-manager wrote availableReplicas=3, and
	// handleDeployment followed the owner reference to the Foo's key.
	if err := (journey{
		title: "a Deployment status change (availableReplicas reaching 3), mapped to the Foo's key",
		key:   fooKey, source: "deployments", want: throughAMapping(queue),
		start: watchEvent("deployments", fooKey, "MODIFIED", ""), within: len(rec.Events()),
	}).await(ctx, rec, out); err != nil {
		return fmt.Errorf("step 6: %w", err)
	}
	log.Info("step 6: traced the scale-up, and a Deployment status change through its owner reference to the Foo's key")

	act.Action("DELETE Foo "+fooKey, false)
	if err := foos.Foos(demoNamespace).Delete(ctx, fooName, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("step 7: deleting the Foo: %w", err)
	}
	if err := (journey{
		title: "the Foo's deletion", key: fooKey, source: "foos", want: toTheHandlerReturn(queue),
		start: watchEvent("foos", fooKey, "DELETED", ""),
	}).await(ctx, rec, out); err != nil {
		return fmt.Errorf("step 7: %w", err)
	}
	log.Info("step 7: traced the Foo's deletion to its handler, which queues nothing: foo-controller has no Foo DeleteFunc (the garbage collector removes the Deployment)")
	// Why this can take tens of seconds on a fresh cluster: kube-controller-manager's
	// garbage collector learns of new resources (our Foo CRD) by re-reading discovery
	// every 30s; until then it cannot watch Foos and so cannot see this one go.
	log.Info("step 7: deleted the Foo; waiting for the garbage collector to delete its Deployment (up to ~30s more while the GC discovers the new Foo resource)")
	if err := poll(ctx, func() (bool, error) {
		err := apps.Get().Namespace(demoNamespace).Resource("deployments").Name(fooName).Do(ctx).Error()
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}); err != nil {
		return fmt.Errorf("step 7: waiting for garbage collection: %w", err)
	}
	log.Info("step 7: the Deployment is gone: the garbage collector followed its owner reference to the deleted Foo")
	return nil
}

// waitAvailable waits until the Deployment has replicas available and the Foo's status
// says so too, logging progress when it changes.
func waitAvailable(ctx context.Context, log *slog.Logger, foos *fooclient.Client, apps rest.Interface, replicas int32, step string) error {
	last := int32(-1)
	err := poll(ctx, func() (bool, error) {
		var dep appsv1.Deployment
		if err := apps.Get().Namespace(demoNamespace).Resource("deployments").Name(fooName).Do(ctx).Into(&dep); err != nil {
			return false, err
		}
		foo, err := foos.Foos(demoNamespace).Get(ctx, fooName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got := foo.Status.AvailableReplicas; got != last {
			log.Info(step+": waiting for availableReplicas", "foo.status", got, "deployment.status", dep.Status.AvailableReplicas, "want", replicas)
			last = got
		}
		return dep.Spec.Replicas != nil && *dep.Spec.Replicas == replicas && foo.Status.AvailableReplicas == replicas, nil
	})
	if err != nil {
		return fmt.Errorf("%s: waiting for %d available replicas: %w", step, replicas, err)
	}
	log.Info(step+": Foo status.availableReplicas reached spec.replicas", "availableReplicas", replicas)
	return nil
}

// poll calls cond every 200ms until it returns true, or ctx ends.
func poll(ctx context.Context, cond func() (bool, error)) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), lastErr)
		case <-tick.C:
		}
	}
}
