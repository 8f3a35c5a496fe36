//go:build !replayonly

package main

import (
	"context"
	"fmt"
	"time"
)

// actions are the page's buttons, in the order it shows them: the Foo's life first,
// then the hooks into the controller, then the faults.
func actions() []action {
	return []action{
		{
			Name: "create-foo", Label: "Create Foo", Fields: []string{"name", "replicas"}, Creates: true,
			Expect: "The Foo's journey: the Foo reflector's watch event ADDED → queued → applied to the indexer → enqueueFoo → workqueue → a worker, which creates the Deployment of the same name. " +
				"Its events stay out of the Foo's journey; follow one of them to see the Deployment's own journey join the Foo's key where handleDeployment maps it, and more reconciles follow as its status changes.",
			Lab: "callback-order", Chapter: "docs/07-reading-a-trace.md#reading-a-journey-line-by-line",
			run: func(ctx context.Context, w world, a args) (string, error) {
				return fmt.Sprintf("created Foo %s/%s with %d replicas", namespace, a.Name, *a.Replicas), w.CreateFoo(ctx, a.Name, *a.Replicas)
			},
		},
		{
			Name: "touch-foo", Label: "Update Foo (annotation only)", Fields: []string{"name"},
			Expect: "An update whose spec did not change still travels the whole pipeline: MODIFIED, Updated, enqueueFoo, one reconcile that finds nothing to do.",
			Lab:    "same-rv-updates", Chapter: "docs/06-controller.md#the-rules-the-pattern-follows",
			run: func(ctx context.Context, w world, a args) (string, error) {
				return "annotated Foo " + a.Name, w.TouchFoo(ctx, a.Name)
			},
		},
		{
			Name: "scale-foo", Label: "Scale Foo", Fields: []string{"name", "replicas"},
			Expect: "The Foo's update reaches a worker, which updates the Deployment; the Deployment's updates come back through handleDeployment as the Foo's key, and the worker copies availableReplicas into the Foo's status.",
			Lab:    "callback-order", Chapter: "docs/06-controller.md#walk-through-the-foo-controller",
			run: func(ctx context.Context, w world, a args) (string, error) {
				return fmt.Sprintf("set Foo %s's spec.replicas to %d", a.Name, *a.Replicas), w.ScaleFoo(ctx, a.Name, *a.Replicas)
			},
		},
		{
			Name: "delete-foo", Label: "Delete Foo", Fields: []string{"name"},
			Expect: "DELETED reaches the Foo indexer (the Foo leaves the cache); enqueueFoo has no OnDelete. The garbage collector then deletes the Deployment, and handleDeployment ignores it: its Foo is gone from the cache.",
			Lab:    "callback-order", Chapter: "docs/04-informer.md#walk-through-the-code",
			run: func(ctx context.Context, w world, a args) (string, error) {
				return "deleted Foo " + a.Name, w.DeleteFoo(ctx, a.Name)
			},
		},
		{
			Name: "edit-deployment", Label: "Edit its Deployment by hand", Fields: []string{"name", "replicas"},
			Expect: "The hand edit arrives as a Deployment update; handleDeployment maps it to the Foo, and the reconcile puts spec.replicas back to the Foo's value: the controller undoes the edit.",
			Lab:    "deployment-edited-by-hand", Chapter: "docs/06-controller.md#the-rules-the-pattern-follows",
			run: func(ctx context.Context, w world, a args) (string, error) {
				return fmt.Sprintf("set Deployment %s's spec.replicas to %d", a.Name, *a.Replicas), w.ScaleDeployment(ctx, a.Name, *a.Replicas)
			},
		},
		{
			Name: "fail-reconcile", Label: "Fail the next reconciles", Fields: []string{"name", "times"},
			Expect: "The Foo is annotated to start a reconcile, which fails N times: each failure is rate limited (retry in 5ms, 10ms, 20ms, …), the workqueue's retries-waiting count rises and falls, then a success calls Forget.",
			Lab:    "failing-reconcile", Chapter: "docs/05-workqueue.md#rate-limiting-addratelimited-forget-numrequeues",
			run: func(ctx context.Context, w world, a args) (string, error) {
				return fmt.Sprintf("the next %d reconciles of %s fail; annotated it to start one", a.Times, a.Name), w.FailReconciles(ctx, a.Name, a.Times)
			},
		},
		{
			Name: "slow-handler", Label: "Slow a handler", Fields: []string{"handler", "delayMs"},
			Expect: "Every call of that handler now sleeps first. Its backlog grows under a burst (scale a Foo a few times) while the other handler keeps up: each handler has its own buffer and goroutine. 0 turns it off.",
			Lab:    "slow-handler", Chapter: "docs/04-informer.md#the-goroutines-of-one-running-informer",
			run: func(_ context.Context, w world, a args) (string, error) {
				// Invariant: validate bounded delayMs to 0–5000, so the product cannot overflow.
				d := time.Duration(*a.DelayMS) * time.Millisecond
				w.SlowHandler(a.Handler, d)
				if d == 0 {
					return a.Handler + " runs at full speed again", nil
				}
				return fmt.Sprintf("%s now sleeps %s before each call", a.Handler, d), nil
			},
		},
		{
			Name: "cut-watch", Label: "Cut the watch", Fault: true,
			Expect: "Both reflectors' watches end (the stream closed), and each re-watches from its last resourceVersion without a LIST: the watch count goes up, the list count does not. " +
				"Cut a watch less than a second old that has seen no event, though, and the reflector relists: a very short watch counts as a failure.",
			Lab: "watch-cut", Chapter: "docs/03-reflector.md#the-state-machine",
			run: func(_ context.Context, w world, _ args) (string, error) {
				n, err := w.CutWatch()
				return fmt.Sprintf("cut %d connection(s) between the informers and the apiserver", n), err
			},
		},
		{
			Name: "compact-etcd", Label: "Compact etcd", Fault: true,
			Expect: "Two writes to a ConfigMap no informer here watches move etcd past the reflectors' resourceVersions, then etcd compacts its history. Nothing shows yet: a running watch is not affected. " +
				"The next watch — press Cut the watch — asks for history that is gone, gets 410 Gone, and the reflector relists: the relist count goes up with its reason.",
			Lab: "compaction-410", Chapter: "docs/03-reflector.md#resource-versions-in-one-paragraph",
			run: func(ctx context.Context, w world, _ args) (string, error) {
				rev, err := w.CompactEtcd(ctx)
				return fmt.Sprintf("wrote ConfigMap compaction-marker twice, then compacted etcd up to revision %d", rev), err
			},
		},
		{
			Name: "restart-apiserver", Label: "Restart the apiserver", Fault: true,
			Expect: "The watches end. A request made while the apiserver is down fails: a refused connection is retried after a backoff (BACKOFF), any other error — a reset, a stream closed at once — makes the reflector relist (the relist count and its reason). " +
				"When the apiserver is back the reflectors list or watch again, and the cache keeps every object throughout.",
			Lab: "apiserver-restart", Chapter: "docs/03-reflector.md#around-the-cycle",
			run: func(ctx context.Context, w world, _ args) (string, error) {
				return "restarted kube-apiserver on the same etcd", w.RestartAPIServer(ctx)
			},
		},
	}
}
