package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
	"github.com/kubeinternals/informers/trace"
)

// queuePerProcess: two foo-controller instances, each with its own informers and
// workqueue, both reconcile the same Foo: nothing is shared between processes.
func queuePerProcess() Scenario {
	return Scenario{
		Name:     "queue-per-process",
		Question: "Is the workqueue cluster-wide or per process?",
		Why: "Per process: a workqueue is a data structure in one process's memory, fed by that process's own informers, and nothing tells one process what another has queued or is processing. " +
			"Two copies of a controller therefore both reconcile every object; only the API server's checks — AlreadyExists on a second create, 409 Conflict on a write from a stale resourceVersion — keep their writes from clobbering each other. " +
			"Real controllers run several replicas with leader election (a Lease): one replica works, the others wait — foo-controller's -leader-elect, in chapter 8.",
		Read: []string{
			"docs/05-workqueue.md (what it is for) and docs/06-controller.md (the rules the pattern follows)",
			"examples/foo-controller/controller/controller.go: New (its own factory, informers and queue); examples/foo-controller/artifacts/deployment.yaml (replicas: 2, with -leader-elect: only the Lease's holder runs workers)",
			"docs/08-leader-election.md (several replicas, one worker)",
			"examples/foo-controller/controller/sync.go: Controller.sync (the AlreadyExists pitfall)",
		},
		Run:      runQueuePerProcess,
		Recorded: queuePerProcessRecorded,
	}
}

// instance is one foo-controller "process" of the scenario.
type instance struct {
	name string
	rec  *trace.Recorder
	log  *requestLog
	stop func() error
}

// runQueuePerProcess runs two foo-controller instances on one Foo and compares what
// each did.
func runQueuePerProcess(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	apps, foos, ns, err := beginFoos(ctx, lab, "queue-per-process")
	if err != nil {
		return nil, err
	}

	var insts []*instance
	defer func() {
		for _, in := range insts {
			_ = in.stop()
		}
	}()
	for _, name := range []string{"A", "B"} {
		cfg, log := withRequestLog(lab.Watched)
		tracer, rec := lab.newRecorderAs(name)
		stop, err := runFooController(ctx, cfg, tracer)
		if err != nil {
			return nil, err
		}
		insts = append(insts, &instance{name: name, rec: rec, log: log, stop: stop})
	}
	r.Do("run two foo-controller instances, A and B, in this process: two controller.New calls, each with its own informers, workqueue, REST clients and tracer — " +
		"exactly what two processes have (we log each one's HTTP requests at its transport); wait until both have listed")
	for _, in := range insts {
		if err := await(ctx, awaitLong, in.name+"'s informers to list", listedBoth(in.rec)); err != nil {
			return nil, err
		}
	}

	const name = "shared"
	key := ns + "/" + name
	if _, err := foos.Foos(ns).Create(ctx, &v1alpha1.Foo{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1alpha1.FooSpec{DeploymentName: name, Replicas: ptr.To[int32](1)},
	}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	r.Do("POST one Foo, %s (replicas 1); wait until its status shows 1 available replica and each instance's last sync of it succeeded", key)
	reconciled := func(in *instance) []trace.Event {
		return trace.Filter(in.rec.Events(), func(e trace.Event) bool { return e.Kind == trace.Reconciled && e.Key == key })
	}
	if err := await(ctx, awaitLong, "both instances to reconcile the Foo", func() bool {
		foo, err := foos.Foos(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || foo.Status.AvailableReplicas != 1 {
			return false
		}
		for _, in := range insts {
			rs := reconciled(in)
			if len(rs) == 0 || rs[len(rs)-1].Reason != "" {
				return false
			}
		}
		return true
	}); err != nil {
		return nil, err
	}
	for _, in := range insts {
		if err := in.stop(); err != nil {
			return nil, err
		}
	}
	var deps appsv1.DeploymentList
	if err := apps.Get().Namespace(ns).Resource("deployments").Do(ctx).Into(&deps); err != nil {
		return nil, err
	}

	// One timeline of both instances: each event's source is prefixed with its instance.
	var merged []trace.Event
	created, creator := 0, "(nobody)"
	var summaries []string
	both := true
	for _, in := range insts {
		for _, e := range in.rec.Events() {
			if e.Key == key && e.Kind == trace.Reconciled {
				e.Source = in.name + " " + e.Source
				merged = append(merged, e)
			}
		}
		rs := reconciled(in)
		failed := trace.Filter(rs, func(e trace.Event) bool { return e.Reason != "" })
		posts := in.log.matching("POST", "/namespaces/"+ns+"/deployments")
		status := in.log.matching("PUT", "/foos/"+name+"/status")
		if c := countCode(posts, 201); c > 0 {
			created += c
			creator = in.name
		}
		both = both && len(rs) > 0
		var errs []string
		for _, e := range failed {
			errs = append(errs, shortReason(e.Reason))
		}
		summaries = append(summaries, fmt.Sprintf("%s: %d syncs of %s (%d failed%s); POST Deployment: %s; PUT Foo status: %s",
			in.name, len(rs), key, len(failed), listIfAny(errs), codes(posts), codes(status)))
	}
	slices.SortStableFunc(merged, func(a, b trace.Event) int { return a.Time.Compare(b.Time) })
	r.See("every sync of %s by either instance (its source is the instance and its queue):", key)
	r.Timeline(firstN(merged, 20))
	if len(merged) > 20 {
		r.See("  … %d more", len(merged)-20)
	}
	for _, s := range summaries {
		r.See("%s", s)
	}
	r.See("Deployments in %s afterwards: %d", ns, len(deps.Items))

	other := insts[1]
	if creator == "B" {
		other = insts[0]
	}
	otherPosts := other.log.matching("POST", "/namespaces/"+ns+"/deployments")
	how := "found it in its own cache and did not POST"
	if len(otherPosts) > 0 {
		how = fmt.Sprintf("POSTed it too and was refused with AlreadyExists (%s): its cache had not heard of it yet; a later sync found it in the cache", codes(otherPosts))
	}
	r.See("%s created the Deployment; %s %s", creator, other.name, how)

	nA, nB := len(reconciled(insts[0])), len(reconciled(insts[1]))
	r.Check("both instances reconciled the same Foo, each from its own queue", both, "A: %d syncs, B: %d syncs", nA, nB)
	r.Check("the Deployment was created once: the API server refused the second create", created == 1 && len(deps.Items) == 1,
		"POSTs answered 201 Created: %d; Deployments: %d", created, len(deps.Items))
	r.Answer = fmt.Sprintf("per process: two instances with their own informers and queues both reconciled %s (A %d times, B %d times); "+
		"%s created the Deployment and %s %s — only the API server kept them from doing the work twice",
		key, nA, nB, creator, other.name, how)
	return r, nil
}

// countCode counts the requests answered with code.
func countCode(reqs []request, code int) int {
	n := 0
	for _, r := range reqs {
		if r.Code == code {
			n++
		}
	}
	return n
}

// shortReason names a sync error by the API server's reason where it is one of the
// two a second writer meets, and cuts anything else to 90 bytes.
func shortReason(reason string) string {
	switch {
	case strings.Contains(reason, "already exists"):
		return "AlreadyExists on its create"
	case strings.Contains(reason, "the object has been modified"):
		return "Conflict: its write carried a stale resourceVersion"
	case len(reason) > 90:
		return reason[:90] + "…"
	}
	return reason
}

// listIfAny is ": a; b" for a non-empty list, "" otherwise.
func listIfAny(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return ": " + strings.Join(items, "; ")
}

// queuePerProcessRecorded: two processes, A and B, each took the shared Foo from its
// own workqueue and reconciled it.
func queuePerProcessRecorded(r recorded) Check {
	processes := map[string]bool{}
	for _, e := range r.library() {
		if p, _, ok := strings.Cut(e.Source, "/"); ok {
			processes[p] = true
		}
	}
	took := func(p string) int {
		return len(r.of(trace.Got).about("/shared").where(func(e trace.Event) bool { return e.Source == p+"/foos" }))
	}
	syncs := func(p string) int {
		return len(r.of(trace.Reconciled).about("/shared").where(func(e trace.Event) bool { return strings.HasPrefix(e.Source, p+"/") }))
	}
	return check("two processes, A and B, each took the shared Foo from its own workqueue and reconciled it",
		len(processes) == 2 && processes["A"] && processes["B"] && took("A") > 0 && took("B") > 0 && syncs("A") > 0 && syncs("B") > 0,
		"processes %d; A took it %d times, synced %d; B took it %d times, synced %d", len(processes), took("A"), syncs("A"), took("B"), syncs("B"))
}
