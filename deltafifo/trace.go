package deltafifo

import (
	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/trace"
)

// rvOf is obj's resourceVersion for the trace, "" for a nil object. Called only when
// a tracer is set: isNil uses reflection.
func rvOf[T indexer.Object](obj T) string {
	if isNil(obj) {
		return ""
	}
	return obj.GetResourceVersion()
}

// The methods below build the queues' trace events. Each runs only when a tracer is
// set (callers check), so that the hot paths keep one pointer comparison per event site.

// traceQueuedLocked reports a delta queued for key (trace.Queued): pending deltas for
// the key after it, and whether it merged into the previous one.
func (f *DeltaFIFO[T]) traceQueuedLocked(key string, d Delta[T], pending int, coalesced bool) {
	e := trace.Event{Stage: trace.DeltaFIFO, Kind: trace.Queued, Source: f.name, Key: key,
		Type: d.Type.String(), ResourceVersion: rvOf(d.Object), Pending: pending, QueueLen: len(f.queue)}
	switch {
	case coalesced:
		e.Reason = "coalesced"
	case d.Tombstone != nil:
		e.Reason = "tombstone"
	}
	f.tracer.Emit(e)
}

// tracePoppedLocked reports the entry of key leaving the queue (trace.Popped).
func (f *DeltaFIFO[T]) tracePoppedLocked(key string, deltas Deltas[T]) {
	f.tracer.Emit(trace.Event{Stage: trace.DeltaFIFO, Kind: trace.Popped, Source: f.name, Key: key,
		ResourceVersion: rvOf(deltas.Newest().Object), Pending: len(deltas), QueueLen: len(f.queue)})
}

// traceQueuedLocked reports a delta appended to the RealFIFO (trace.Queued); a
// whole-list delta carries its list's or bookmark's resourceVersion.
func (f *RealFIFO[T]) traceQueuedLocked(e entry[T]) {
	ev := trace.Event{Stage: trace.RealFIFO, Kind: trace.Queued, Source: f.name, Key: e.key,
		Type: e.delta.Type.String(), ResourceVersion: rvOf(e.delta.Object), QueueLen: len(f.items)}
	if e.delta.Info != nil {
		ev.ResourceVersion = e.delta.Info.ResourceVersion
	}
	f.tracer.Emit(ev)
}

// tracePoppedLocked reports one delta, still at the head of the queue, leaving it in a batch of n (trace.Popped;
// Type "batch" when n > 1). Whole-list deltas have no key: Type names them.
// Callers check f.tracer first.
func (f *RealFIFO[T]) tracePoppedLocked(key string, d Delta[T], n int) {
	e := trace.Event{Stage: trace.RealFIFO, Kind: trace.Popped, Source: f.name, Key: key,
		Type: d.Type.String(), ResourceVersion: rvOf(d.Object), Pending: n, QueueLen: len(f.items) - n}
	if n > 1 {
		e.Type = "batch"
	}
	f.tracer.Emit(e)
}
