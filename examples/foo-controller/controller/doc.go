// Package controller is foo-controller's reconcile loop: k8s.io/sample-controller's
// controller, behaviour for behaviour, on this module's informers and workqueue. The
// program (../main.go), `make demo` (examples/demo) and the integration tests all run
// this one implementation.
//
// # Where this sits
//
//	kube-apiserver ──LIST/WATCH──▶ informer[Foo]        ──OnAdd/OnUpdate──────────────┐
//	               ──LIST/WATCH──▶ informer[Deployment] ──owner reference → Foo key ──┤
//	                                                                                  ▼
//	                         ┏━━━━━━━━━━━━━ this package ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
//	                         ┃ RateLimitingQueue[Key] ──Get──▶ 2 workers ──▶ sync(Key)      ┃
//	                         ┃   read Foo and Deployment from the caches (Listers)          ┃
//	                         ┃   create / update the Deployment, update Foo status (REST)   ┃
//	                         ┃   Forget on success, AddRateLimited on error, Done always    ┃
//	                         ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛
//
// # Invariants
//
//   - The queue holds keys (namespace/name), never objects: a worker always reads the
//     newest cached state, and a burst of events about one Foo collapses into one sync.
//   - Workers read only from the caches and write only through REST; they never modify
//     a cached object (newDeployment builds a fresh one, the status update a DeepCopy).
//   - Every key Get returns is Done exactly once; it is Forgotten on success and on a
//     permanent error (ErrInvalidSpec), and re-added with backoff on any other error.
//   - Workers start only after the handlers have seen the initial lists (Run waits on
//     the handler registrations, not the informers), so every existing Foo is already
//     queued. The one exception is a handler that panicked on an initial add: the
//     listener recovers it and still counts the add as handled.
//   - A Controller runs once. Run returns only after every goroutine it started has
//     exited: workers first (the queue drained), then the informers.
//
// # Reading order
//
//  1. controller.go — Options, New (informers, handlers, queue), Run and the workers.
//  2. handlers.go — what each informer event enqueues; following an owner reference.
//  3. sync.go — the reconcile: newDeployment, needsUpdate, the status update.
//  4. deployments.go — the two Deployment writes, on a plain REST client.
//  5. hooks.go — Hooks, for experiments that fail syncs or slow handlers, and the
//     accessors an observer reads the caches through.
//
// # Differences from client-go (sample-controller)
//
//   - A Foo whose spec.deploymentName is empty is reported as a Warning Event
//     (InvalidSpec) and forgotten; sample-controller only logs it. Both stop retrying.
//   - Scaling updates a DeepCopy of the cached Deployment, resourceVersion included, so a
//     concurrent writer's change gives 409 Conflict and a retry. sample-controller PUTs
//     newDeployment(foo) with no resourceVersion, which overwrites any other change to
//     the Deployment (annotations, other fields) without noticing.
//   - A Normal "Synced" Event is recorded only when the sync changed something (created
//     or scaled the Deployment, or wrote status); sample-controller records one on every
//     sync, i.e. every 30s per Foo, which its aggregating recorder folds into a count
//     (ours would count them too, but an Event per no-op sync says nothing). The status
//     is likewise written only
//     when it differs (an identical PUT would be a no-op on the server anyway; see
//     examples/secret-sync/README.md).
//   - The Deployment handler checks the owner reference's API group as well as its
//     kind; sample-controller checks only Kind == "Foo".
//   - As in sample-controller, a Deployment not controlled by the Foo records a Warning
//     Event and fails the sync, which is retried with backoff (the other owner may let
//     go); each retry records the Event again.
//   - Events go through examples/internal/events (events.k8s.io/v1: a repeat within 6
//     minutes PATCHes the first Event's series.count, no similar-message aggregation
//     or spam filter); sample-controller uses client-go's record.EventRecorder with a
//     broadcaster (core/v1 Events, count and lastTimestamp).
//   - Shutdown drains: on ctx end, the queue is shut down with ShutDownWithDrain and
//     the item in hand finishes with a context that is not cancelled (bounded by
//     Options.DrainTimeout). sample-controller's workers stop with the context, so an
//     in-flight REST call is cut off.
//   - Simplified: no generated clientset, listers or informers; the typed Foo client is
//     ../fooclient and Deployments are written with a REST client.
package controller
