// Package events posts events.k8s.io/v1 Events about objects, so that a controller's
// decisions show up in `kubectl describe` and `kubectl get events`.
//
// # Where this sits in the pipeline
//
//	worker: read the cache, reconcile, write via REST
//	   └─ Recorder.Eventf ─ POST /apis/events.k8s.io/v1/namespaces/{ns}/events ─▶ kube-apiserver
//
// An Event is diagnostics, not state: if posting fails the controller carries on. So
// Eventf never returns an error (it logs it), and never blocks its caller for longer than
// Options.Timeout.
//
// # Invariants
//
//   - Every Event names what it is about (regarding: kind, apiVersion, namespace, name,
//     uid, resourceVersion), who reported it (reportingController, reportingInstance),
//     and carries a type of Normal or Warning, a reason and an action, as events.k8s.io/v1
//     validation requires.
//   - One Recorder never produces two Event names alike: names are
//     "<regarding name>.<hex nanoseconds>", and the nanoseconds are made strictly
//     increasing per Recorder, so two events in the same clock tick do not collide.
//
// # Reading order
//
//  1. recorder.go — NewRecorder, Eventf, Record.
//  2. build.go — turning an object into an ObjectReference and an Event.
//
// # Differences from client-go (tools/events)
//
//   - Simplified: no broadcaster, no sink goroutine, no event series (client-go folds
//     repeats of the same event into one Event with a series.count and PATCHes it). Each
//     call is one synchronous POST, bounded by a timeout. Why that is safe here: the
//     examples emit a handful of events; a controller that emits events in a hot loop
//     wants client-go's aggregation.
//   - No "related" object.
//   - Bad input (type other than Normal/Warning, empty reason or action, unknown kind)
//     is a returned error from Record and a logged one from Eventf; client-go logs it.
//   - A note longer than the API's 1024-byte limit is cut to 1024 bytes instead of
//     being rejected by the server, so a long error message still gets recorded.
//   - Names: when "<name>.<hex>" is not a valid DNS subdomain (a very long object name),
//     client-go uses a random UUID; we let the server pick one with generateName.
package events
