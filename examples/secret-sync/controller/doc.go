// Package controller is secret-sync: it copies every Secret of a source namespace into
// each namespace that opts in with an annotation, keeps the copies equal to their
// source, and removes copies that are no longer wanted. It is the classic
// "finishing the controller" exercise of informer tutorials, built to show the
// one-shot (constant key) pattern.
//
// # Where this sits
//
//	informer[Secret in source ns]      ─┐
//	informer[Secret copies, by label]  ─┼─ every add/update/delete ─▶ queue.Add("sync")  (one constant key)
//	informer[Namespace]                ─┘                                   │ Get
//	                                                                        ▼
//	                        ┏━━━━━━━━━━━━━━━━━━━ this package ━━━━━━━━━━━━━━━━━━━━━━━━━━┓
//	                        ┃ one worker: full sync from the caches                     ┃
//	                        ┃   for each opted-in namespace × source Secret:            ┃
//	                        ┃     POST the copy; on AlreadyExists, PUT it               ┃
//	                        ┃   DELETE copies whose source or namespace is gone         ┃
//	                        ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛
//
// # Why one constant key
//
// The queue deduplicates: while a sync is queued, any number of further events add
// nothing. A burst of a thousand events costs one or two full syncs, and since the sync
// reads only the caches, it always acts on the newest state. The price is that every
// sync does all the work; that is fine while the work is small (a few namespaces ×
// a few Secrets) and is the simplest correct controller there is.
//
// # Why it does not feed itself
//
// The copies informer watches the objects the sync writes, so a write that produced a
// watch event would enqueue another sync, which would write again… The loop is broken
// by the API server: a PUT whose content equals what is stored is not written to etcd,
// keeps its resourceVersion, and produces no watch event (README.md shows the
// experiment, experiment_integration_test.go asserts it). Only real changes come back
// as events, and each of those is answered by one sync that writes nothing new.
//
// # Invariants
//
//   - The queue only ever holds SyncKey; the worker is one goroutine, so two syncs
//     never run at once.
//   - A copy carries the label LabelSourceNamespace; pruning deletes only labelled
//     Secrets. Pitfall: create-then-update does not ask whose a Secret is, so a
//     same-named Secret the user made in an opted-in namespace is overwritten (and
//     labelled). A controller that must not do that GETs first and checks the label.
//   - The source namespace itself is never a target.
//
// # Reading order
//
//  1. controller.go — Options, New, the handlers (all one line: enqueue SyncKey), Run.
//  2. sync.go — the full sync, desiredCopy, and pruning.
//
// # Differences from client-go
//
// client-go has no such controller; the parts (informers, rate-limited queue) behave
// as in client-go. Simplified: Secrets of type kubernetes.io/service-account-token are
// not copied (the token controller owns them); a change of a Secret's type, which is
// immutable, fails the update and is retried with backoff.
package controller
