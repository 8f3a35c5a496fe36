package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
	"github.com/kubeinternals/informers/examples/foo-controller/fooclient"
	"github.com/kubeinternals/informers/trace"
)

// callbackOrder: foo-controller's two informers each call their handler when their
// own watch brings a change; between them, the order is the order in which the
// changes happened in the cluster.
func callbackOrder() Scenario {
	return Scenario{
		Name:     "callback-order",
		Question: "When are the Foo informer's and the Deployment informer's callbacks invoked?",
		Why: "Each informer calls its handlers when its own watch delivers a change, right after writing it to its cache; the two informers share nothing, so between them the order is cause and effect in the cluster. " +
			"The Foo's add and spec change come first because they cause the rest: the worker creates or scales the Deployment (its add and update), kube-controller-manager moves the Deployment's status (more updates), the worker copies it into the Foo's status (Foo updates). " +
			"The Deployment's delete comes only when the garbage collector, which watches Foos too, sees the owner gone.",
		Read: []string{
			"docs/06-controller.md (walk through the Foo controller) and docs/07-reading-a-trace.md",
			"examples/foo-controller/controller/handlers.go: Controller.enqueueFoo, Controller.handleDeployment",
			"informer/listener.go: listener.call (one goroutine per handler, in order)",
		},
		Run:      runCallbackOrder,
		Recorded: callbackOrderRecorded,
	}
}

// gcWait bounds the wait for the garbage collector. Why longer than awaitLong: on a
// fresh cluster kube-controller-manager's garbage collector learns of a new resource
// (the Foo CRD) by re-reading discovery every 30s, and cannot act on a Foo's
// dependents before that.
const gcWait = 90 * time.Second

// phasedCall is one HandlerCalled event of foo-controller, in a phase.
type phasedCall struct {
	trace.Event
	phase string
}

// runCallbackOrder creates, scales and deletes a Foo under a traced foo-controller and
// lists every handler call for its namespace, phase by phase.
func runCallbackOrder(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	apps, foos, ns, err := beginFoos(ctx, lab, "callback-order")
	if err != nil {
		return nil, err
	}
	crdAt := lab.fooCRDAt
	r.Do("(the lab installed the Foo CRD when it started, %s ago)", time.Since(crdAt).Round(time.Second))

	tracer, rec := lab.newRecorder()
	stop, err := runFooController(ctx, lab.Watched, tracer)
	if err != nil {
		return nil, err
	}
	defer func() { _ = stop() }()
	r.Do("run foo-controller in this process (controller.New on the watched config, 2 workers, resync off so that every call is a change), traced, and wait until both informers have listed")
	if err := await(ctx, awaitLong, "foo-controller's informers to list", listedBoth(rec)); err != nil {
		return nil, err
	}

	const name = "example"
	fooKey := ns + "/" + name // the Deployment has the Foo's name, hence the same key
	calledAt := func(source, typ, rv string) func() bool {
		return func() bool {
			return count(rec.Events(), func(e trace.Event) bool {
				return e.Kind == trace.HandlerCalled && e.Source == source && (typ == "" || e.Type == typ) && e.Key == fooKey && (rv == "" || e.ResourceVersion == rv)
			}) > 0
		}
	}
	// settled waits until the Foo's status and the Deployment report replicas available,
	// and each handler has been called for the versions we then read.
	settled := func(replicas int32, what string) error {
		var foo *v1alpha1.Foo
		var dep appsv1.Deployment
		if err := await(ctx, awaitLong, what, func() bool {
			var err error
			if foo, err = foos.Foos(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
				return false
			}
			if err := apps.Get().Namespace(ns).Resource("deployments").Name(name).Do(ctx).Into(&dep); err != nil {
				return false
			}
			return foo.Status.AvailableReplicas == replicas && dep.Status.AvailableReplicas == replicas
		}); err != nil {
			return err
		}
		if err := await(ctx, awaitLong, "enqueueFoo to hear the Foo at rv "+foo.ResourceVersion, calledAt("enqueueFoo", "update", foo.ResourceVersion)); err != nil {
			return err
		}
		return await(ctx, awaitLong, "handleDeployment to hear the Deployment at rv "+dep.ResourceVersion, calledAt("handleDeployment", "", dep.ResourceVersion))
	}

	// Create.
	createAt := time.Now()
	foo, err := foos.Foos(ns).Create(ctx, &v1alpha1.Foo{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1alpha1.FooSpec{DeploymentName: name, Replicas: ptr.To[int32](1)},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	created, createdRV := time.Now(), foo.ResourceVersion
	r.Do(createFoo+"%s (deploymentName %s, replicas 1), wait until the Foo's status and the Deployment show 1 available replica", fooKey, name)
	if err := settled(1, "1 available replica"); err != nil {
		return nil, err
	}

	// Scale.
	scaleAt := time.Now()
	scaledRV, err := scaleFoo(ctx, foos, ns, name, 3)
	if err != nil {
		return nil, err
	}
	r.Do("scale: PUT the Foo with replicas 3 (re-reading it on a 409: the controller writes its status), wait until both show 3 available")
	if err := settled(3, "3 available replicas"); err != nil {
		return nil, err
	}

	// Delete.
	deleteAt := time.Now()
	if err := foos.Foos(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return nil, err
	}
	r.Do("delete: DELETE the Foo (background propagation), wait until the garbage collector has deleted its Deployment and handleDeployment has heard it")
	if err := await(ctx, gcWait, "the garbage collector to delete the Deployment", func() bool {
		return apierrors.IsNotFound(apps.Get().Namespace(ns).Resource("deployments").Name(name).Do(ctx).Error())
	}); err != nil {
		return nil, err
	}
	if err := await(ctx, awaitLong, "handleDeployment to hear the delete", calledAt("handleDeployment", "delete", "")); err != nil {
		return nil, err
	}
	if err := stop(); err != nil {
		return nil, err
	}

	events := rec.Events()
	var calls []phasedCall
	for _, e := range events {
		if e.Kind != trace.HandlerCalled || !strings.HasPrefix(e.Key, ns+"/") {
			continue
		}
		phase := "create"
		switch {
		case !e.Time.Before(deleteAt):
			phase = "delete"
		case !e.Time.Before(scaleAt):
			phase = "scale"
		}
		calls = append(calls, phasedCall{e, phase})
	}
	notes := map[string]string{createdRV: "our POST", scaledRV: "our PUT, replicas 3"}
	r.See("every handler call foo-controller made for objects in %s (offsets from the Foo's POST):", ns)
	writeCalls(r, calls, createAt, notes)
	for _, e := range events {
		if e.Kind == trace.WatchEvent && e.Source == "foos" && e.Key == fooKey && e.Type == "ADDED" {
			r.See("the Foo's POST took %s (its CRD was Established %s before: kube-apiserver's first write of a new resource is slow); its ADDED reached foo-controller's reflector as the POST returned (%+.1fms)",
				created.Sub(createAt).Round(time.Millisecond), createAt.Sub(crdAt).Round(time.Millisecond), float64(e.Time.Sub(created))/float64(time.Millisecond))
		}
	}

	in := func(phase string) []phasedCall {
		var out []phasedCall
		for _, c := range calls {
			if c.phase == phase {
				out = append(out, c)
			}
		}
		return out
	}
	find := func(cs []phasedCall, source, typ, rv string) (int, bool) {
		for i, c := range cs {
			if c.Source == source && c.Type == typ && (rv == "" || c.ResourceVersion == rv) {
				return i, true
			}
		}
		return -1, false
	}
	countAfter := func(cs []phasedCall, from int, source, typ string) int {
		n := 0
		for _, c := range cs[from+1:] {
			if c.Source == source && c.Type == typ {
				n++
			}
		}
		return n
	}

	create, scale, del := in("create"), in("scale"), in("delete")
	first := "(none)"
	if len(create) > 0 {
		first = create[0].Source + " " + create[0].Type
	}
	depAdd, okDepAdd := find(create, "handleDeployment", "add", "")
	depUpdates := 0
	if okDepAdd {
		depUpdates = countAfter(create, depAdd, "handleDeployment", "update")
	}
	fooStatus := countAfter(create, 0, "enqueueFoo", "update")
	r.Check("create: the first call is enqueueFoo's add of the Foo", len(create) > 0 && create[0].Source == "enqueueFoo" && create[0].Type == "add" && create[0].ResourceVersion == createdRV,
		"first: %s", first)
	r.Check("create: handleDeployment's add of the Deployment follows", okDepAdd && depAdd > 0, "at position %d of %d", depAdd+1, len(create))
	r.Check("create: handleDeployment's updates follow as the Deployment's status moves", depUpdates > 0, "Deployment updates after its add: %d", depUpdates)
	r.Check("create: enqueueFoo hears updates too, when the worker writes the Foo's status", fooStatus > 0, "Foo updates: %d", fooStatus)

	fooScale, okScale := find(scale, "enqueueFoo", "update", scaledRV)
	scaleDep := 0
	if okScale {
		scaleDep = countAfter(scale, fooScale, "handleDeployment", "update")
	}
	r.Check("scale: enqueueFoo's update of the new spec, then handleDeployment's updates", okScale && scaleDep > 0,
		"Foo update rv=%s heard: %v; Deployment updates after it: %d", scaledRV, okScale, scaleDep)

	fooDel, okFooDel := find(del, "enqueueFoo", "delete", "")
	depDel, okDepDel := find(del, "handleDeployment", "delete", "")
	gcTook := time.Duration(0)
	if okFooDel && okDepDel {
		gcTook = del[depDel].Time.Sub(del[fooDel].Time)
		r.See("the Deployment's delete came %s after the Foo's: kube-controller-manager's garbage collector finds new resources (the Foo CRD, installed %s before the Foo's delete) "+
			"by re-reading discovery every 30s, and cannot see a Foo go before that", gcTook.Round(time.Millisecond), deleteAt.Sub(crdAt).Round(time.Millisecond))
	}
	r.Check("delete: enqueueFoo's delete of the Foo, then — once the garbage collector acts — handleDeployment's delete", okFooDel && okDepDel && depDel > fooDel,
		"Foo delete at position %d, Deployment delete at %d, %s apart", fooDel+1, depDel+1, gcTook.Round(time.Millisecond))
	r.Answer = fmt.Sprintf("each informer calls its handler when its own watch delivers a change, so the order follows cause and effect: "+
		"create — Foo add, Deployment add, %d Deployment and %d Foo (status) updates; scale — Foo update, then %d Deployment updates; "+
		"delete — Foo delete, and the Deployment's delete %s later, when the garbage collector acted",
		depUpdates, fooStatus, scaleDep, gcTook.Round(time.Millisecond))
	return r, nil
}

// writeCalls prints the handler calls, one line each, with the phase they fell in.
func writeCalls(r *Report, calls []phasedCall, start time.Time, notes map[string]string) {
	phase := ""
	for _, c := range calls {
		if c.phase != phase {
			phase = c.phase
			r.See("%s:", phase)
		}
		note := ""
		if n := notes[c.ResourceVersion]; n != "" && strings.HasPrefix(c.Source, "enqueueFoo") {
			note = "  (" + n + ")"
		}
		r.See("  %10s  %-16s  %-6s  %s rv=%s%s", trace.Offset(c.Time.Sub(start)), c.Source, c.Type, c.Key, c.ResourceVersion, note)
	}
}

// scaleFoo sets the Foo's replicas, re-reading it after a 409 Conflict (the controller
// writes its status meanwhile), and returns the resourceVersion of the write.
func scaleFoo(ctx context.Context, foos *fooclient.Client, ns, name string, replicas int32) (string, error) {
	var rv string
	err := retryOnConflict(ctx, func() error {
		foo, err := foos.Foos(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		foo.Spec.Replicas = ptr.To(replicas)
		if foo, err = foos.Foos(ns).Update(ctx, foo, metav1.UpdateOptions{}); err != nil {
			return err
		}
		rv = foo.ResourceVersion
		return nil
	})
	return rv, err
}

// createFoo begins the description of an action that creates a Foo, followed by its
// key: the recording checks find the key there (recorded.actionKey).
const createFoo = "create: POST Foo "

// callbackOrderRecorded: on create, enqueueFoo's add came first, then
// handleDeployment's add of the Deployment.
func callbackOrderRecorded(r recorded) Check {
	key := r.actionKey(createFoo)
	calls := r.of(trace.HandlerCalled).where(func(e trace.Event) bool { return key != "" && e.Key == key })
	ok := len(calls) >= 2 && calls[0].Source == "enqueueFoo" && calls[0].Type == "add" &&
		calls[1].Source == "handleDeployment" && calls[1].Type == "add"
	var got []string
	for _, e := range calls[:min(len(calls), 3)] {
		got = append(got, e.Source+" "+e.Type)
	}
	return check("create: the first handler call is enqueueFoo's add, then handleDeployment's add", ok, "%s", strings.Join(got, ", "))
}
