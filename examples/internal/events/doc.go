// Package events writes events.k8s.io/v1 Events about objects, counting repeats of one
// event on one Event, so that a controller's decisions show up in `kubectl describe` and
// `kubectl get events`.
//
// # Where this sits in the pipeline
//
//	worker: read the cache, reconcile, write via REST
//	   └─ Recorder.Eventf ─ seen this event in the last 6 min?
//	        no:  POST  /apis/events.k8s.io/v1/namespaces/{ns}/events                 ─▶ kube-apiserver
//	        yes: PATCH /apis/events.k8s.io/v1/namespaces/{ns}/events/{name} (series) ─▶ kube-apiserver
//
// An Event is diagnostics, not state: if writing fails the controller carries on. So
// Eventf never returns an error (it logs it), and never blocks its caller for longer than
// Options.Timeout.
//
// # Repeats
//
// A controller that retries a failing sync records the same Warning on every retry:
// foo-controller, finding a Deployment it does not own, recorded ten identical Events in
// four seconds. Two events are the same when they agree on the object (kind, apiVersion,
// namespace, name, uid; not resourceVersion), type, reason, action and note. The first is
// POSTed; each repeat at most 6 minutes after the previous one PATCHes that Event's
// series to {count, lastObservedTime}, so the object has one Event, which `kubectl
// describe` prints as "(x10 over 4s)" and `kubectl get events -o wide` with COUNT 10.
// A repeat after a longer pause starts a new Event. If the Event is gone when a repeat
// comes (it expired after the apiserver's --event-ttl, or was deleted), the PATCH gets
// 404 and the Event is created again, carrying the count so far.
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
//   - One Recorder has at most one Event per open series, however many workers repeat
//     the event at once: writes of one series take turns, and each PATCH counts one
//     more than the one before. It remembers at most 4096 series, forgetting the least
//     recently seen first; a forgotten event's next repeat starts a new Event.
//
// # Reading order
//
//  1. recorder.go — NewRecorder, Eventf, Record: create, or patch the series.
//  2. series.go — which events are repeats, and the bounded cache of series.
//  3. build.go — turning an object into an ObjectReference and an Event.
//
// # Differences from client-go
//
// client-go has two recorders: tools/record (core/v1 Events, with count and
// lastTimestamp) and tools/events (events.k8s.io/v1, with series). This package writes
// the newer API, so repeats are counted in series, as tools/events does, and are found
// with tools/record's key and cache (see series.go).
//
//   - Simplified: no broadcaster and no sink goroutine; each call is one synchronous
//     write, bounded by a timeout, and a failed write is not retried (the next repeat
//     carries its count).
//   - Simplified: no similar-event aggregation and no spam filter. tools/record merges
//     ten events that differ only in their message, within 10 minutes, into one
//     "(combined from similar events): …" Event, and lets a source write at most 25
//     events about one object, then one every 5 minutes, dropping the rest. Why we
//     leave both out: the flood that happens here is one event repeated, which the
//     series already folds into one Event and one PATCH per repeat; the examples' notes
//     are fixed sentences, so similar events would be rare; and an Event silently
//     dropped or reworded is the one a reader of `kubectl describe` goes looking for.
//     tools/events, the recorder for this API, has neither.
//   - The key includes the note, as tools/record's does; tools/events leaves the note
//     out (a repeat with a new note is counted on the first note's Event), and includes
//     the object's resourceVersion (so a repeat after the object changed starts a new
//     Event).
//   - No periodic heartbeat: tools/events re-PATCHes open series every 30 minutes so that
//     they outlive the Event TTL; here each repeat's PATCH does that (the TTL restarts
//     on every write), and a series closes after 6 quiet minutes anyway.
//   - No "related" object.
//   - Bad input (type other than Normal/Warning, empty reason or action, unknown kind)
//     is a returned error from Record and a logged one from Eventf; client-go logs it.
//   - A note longer than the API's 1024-byte limit is cut to 1024 bytes instead of
//     being rejected by the server, so a long error message still gets recorded.
//   - Names: when "<name>.<hex>" is not a valid DNS subdomain (a very long object name),
//     client-go uses a random UUID; we let the server pick one with generateName.
package events
