package main

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
	"github.com/kubeinternals/informers/trace"
)

// deploymentEditedByHand: a hand edit of a Deployment foo-controller owns reaches the
// controller through the Deployment informer, is mapped to the Foo's key by the owner
// reference, and the sync puts the Foo's replicas back.
func deploymentEditedByHand() Scenario {
	return Scenario{
		Name:     "deployment-edited-by-hand",
		Question: "Someone scales foo-controller's Deployment by hand: how does the controller hear of it, and what does it do?",
		Why: "foo-controller watches Deployments as well as Foos, and its Deployment handler follows the owner reference to the Foo that controls the Deployment and queues that Foo's key: a change to the product is handled as a change to its source. " +
			"The sync then compares the Deployment's spec.replicas with the Foo's, finds them apart, and updates a copy of the cached Deployment back to the Foo's value; that write comes back through the Deployment informer as one more update, which queues the Foo again and finds nothing to do. " +
			"The update carries the resourceVersion the cache held: had the cache not yet seen the hand edit, the write would get 409 Conflict and be retried once it had, so the controller never overwrites a change it has not seen.",
		Read: []string{
			"docs/06-controller.md (the rules the pattern follows; what sample-controller does differently)",
			"examples/foo-controller/controller/handlers.go: Controller.onDeploymentUpdate, Controller.handleDeployment, ownerFoo",
			"examples/foo-controller/controller/sync.go: Controller.sync, needsUpdate",
		},
		Run:      runDeploymentEditedByHand,
		Recorded: deploymentEditedByHandRecorded,
	}
}

// handEdit is how the scenario's action describes the hand edit; the recording is
// searched for it.
const handEdit = "by hand: PUT the Deployment with replicas 3"

// runDeploymentEditedByHand creates a Foo with one replica under a traced
// foo-controller, scales its Deployment to 3 by hand, and watches the controller put
// it back.
func runDeploymentEditedByHand(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	apps, foos, ns, err := beginFoos(ctx, lab, "deployment-edited")
	if err != nil {
		return nil, err
	}
	tracer, rec := lab.newRecorder()
	stop, err := runFooController(ctx, lab.Watched, tracer)
	if err != nil {
		return nil, err
	}
	defer func() { _ = stop() }()
	r.Do("run foo-controller in this process (controller.New on the watched config, 2 workers, resync off), traced, and wait until both informers have listed")
	if err := await(ctx, awaitLong, "foo-controller's informers to list", listedBoth(rec)); err != nil {
		return nil, err
	}

	const name = "example"
	key := ns + "/" + name // the Deployment has the Foo's name, hence the same key
	if _, err := foos.Foos(ns).Create(ctx, &v1alpha1.Foo{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1alpha1.FooSpec{DeploymentName: name, Replicas: ptr.To[int32](1)},
	}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	r.Do(createFoo+"%s (deploymentName %s, replicas 1), wait until foo-controller has created the Deployment and its cache holds it", key, name)
	var dep appsv1.Deployment
	if err := await(ctx, awaitLong, "the Deployment, in foo-controller's cache", func() bool {
		if apps.Get().Namespace(ns).Resource("deployments").Name(name).Do(ctx).Into(&dep) != nil {
			return false
		}
		return count(rec.Events(), func(e trace.Event) bool {
			return e.Kind == trace.HandlerCalled && e.Source == "handleDeployment" && e.Key == key && e.ResourceVersion == dep.ResourceVersion
		}) > 0
	}); err != nil {
		return nil, err
	}

	r.Do("%s (re-read on a 409: the Deployment's status moves meanwhile), then wait until spec.replicas is 1 again", handEdit)
	editAt := time.Now()
	editedRV, err := scaleDeployment(ctx, apps, ns, name, 3)
	if err != nil {
		return nil, err
	}
	r.See("the hand edit was written at rv %s", editedRV)
	var restored appsv1.Deployment
	if err := await(ctx, awaitLong, "foo-controller to put spec.replicas back to 1", func() bool {
		if apps.Get().Namespace(ns).Resource("deployments").Name(name).Do(ctx).Into(&restored) != nil {
			return false
		}
		return restored.Spec.Replicas != nil && *restored.Spec.Replicas == 1
	}); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "the controller's write to come back to handleDeployment", func() bool {
		return count(rec.Events(), func(e trace.Event) bool {
			return e.Kind == trace.HandlerCalled && e.Source == "handleDeployment" && e.Key == key && e.ResourceVersion == restored.ResourceVersion
		}) > 0
	}); err != nil {
		return nil, err
	}
	took := time.Since(editAt)
	if err := stop(); err != nil {
		return nil, err
	}

	after := recorded(rec.Events()).where(func(e trace.Event) bool { return !e.Time.Before(editAt) }).about("/" + name)
	r.See("what foo-controller did after the hand edit, for %s (offsets from the edit):", key)
	for _, e := range after {
		switch e.Kind {
		case trace.HandlerCalled, trace.Mapped, trace.Reconciled:
			what := e.Type
			switch e.Kind {
			case trace.Mapped:
				what = "mapped to the Foo's key " + e.Detail
			case trace.Reconciled:
				what = "reconciled"
				if e.Reason != "" {
					what += ", error: " + e.Reason
				}
			}
			r.See("  %10s  %-16s  %s  rv=%s", trace.Offset(e.Time.Sub(editAt)), e.Source, what, e.ResourceVersion)
		}
	}

	heard := after.of(trace.HandlerCalled).from("handleDeployment").where(func(e trace.Event) bool { return e.ResourceVersion == editedRV })
	mapped := after.of(trace.Mapped).where(func(e trace.Event) bool { return e.Detail == key })
	var reconciled recorded
	if len(mapped) > 0 {
		reconciled = after.of(trace.Reconciled).where(func(e trace.Event) bool { return e.Time.After(mapped[0].Time) })
	}
	r.Check("handleDeployment heard the hand edit (its resourceVersion) as an update", len(heard) == 1 && heard[0].Type == "update",
		"calls at rv %s: %d", editedRV, len(heard))
	r.Check("the owner reference mapped the Deployment to the Foo's key, which a worker reconciled", len(mapped) > 0 && len(reconciled) > 0,
		"mapped: %d, reconciles: %d", len(mapped), len(reconciled))
	r.Check("the Deployment's spec.replicas is the Foo's again, written after the edit", *restored.Spec.Replicas == 1 && restored.ResourceVersion != editedRV,
		"spec.replicas %d at rv %s (the edit was rv %s)", *restored.Spec.Replicas, restored.ResourceVersion, editedRV)
	r.Answer = fmt.Sprintf("through the Deployment informer: handleDeployment heard the edit, followed the owner reference to the Foo's key, and the sync put spec.replicas back to the Foo's 1 (%d reconciles, the Deployment restored %s after the edit); the Foo is the source of truth",
		len(reconciled), took.Round(time.Millisecond))
	return r, nil
}

// scaleDeployment sets the Deployment's spec.replicas, re-reading it after a 409
// Conflict (kube-controller-manager writes its status meanwhile), and returns the
// resourceVersion of the write.
func scaleDeployment(ctx context.Context, apps *rest.RESTClient, ns, name string, replicas int32) (string, error) {
	var out appsv1.Deployment
	err := retryOnConflict(ctx, func() error {
		var dep appsv1.Deployment
		if err := apps.Get().Namespace(ns).Resource("deployments").Name(name).Do(ctx).Into(&dep); err != nil {
			return err
		}
		dep.Spec.Replicas = ptr.To(replicas)
		return apps.Put().Namespace(ns).Resource("deployments").Name(name).Body(&dep).Do(ctx).Into(&out)
	})
	return out.ResourceVersion, err
}

// deploymentEditedByHandRecorded: after the hand edit, handleDeployment was called for
// the Deployment, the owner reference mapped it to the Foo's key, and then a worker
// reconciled that key and handleDeployment heard the Deployment again (the
// controller's write; it may arrive before the sync that wrote it has ended).
func deploymentEditedByHandRecorded(r recorded) Check {
	key := r.actionKey(createFoo) // the Deployment has the Foo's name, hence its key
	after := r.after(handEdit).where(func(e trace.Event) bool { return key != "" && e.Key == key })
	var seq []string
	for _, e := range after {
		switch {
		case e.Kind == trace.HandlerCalled && e.Source == "handleDeployment":
			seq = append(seq, "handleDeployment "+e.Type)
		case e.Kind == trace.Mapped:
			seq = append(seq, "mapped")
		case e.Kind == trace.Reconciled:
			seq = append(seq, "reconciled")
		}
	}
	heard, mapped, reconciled, heardAgain := false, false, false, false
	for _, s := range seq {
		switch {
		case !heard:
			heard = s == "handleDeployment update"
		case !mapped:
			mapped = s == "mapped"
		default:
			reconciled = reconciled || s == "reconciled"
			heardAgain = heardAgain || s == "handleDeployment update"
		}
	}
	return check("after the hand edit: handleDeployment's update, mapped to the Foo; then a reconcile of the Foo and the controller's write heard back", heard && mapped && reconciled && heardAgain,
		"%v", seq[:min(len(seq), 10)])
}
