package deltafifo

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/trace"
)

// sentences renders the events as the timeline does, without times.
func sentences(events []trace.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = string(e.Stage) + " " + e.Source + ": " + e.String()
	}
	return out
}

func TestTheDeltaFIFOTracesQueuedCoalescedReplacedDroppedAndPopped(t *testing.T) {
	var rec trace.Recorder
	f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{
		Name:         "configmaps",
		KnownObjects: newKnown(cm("ns", "known", "5")),
		Tracer:       trace.New(rec.Record),
	})
	require.NoError(t, f.Add(cm("ns", "a", "10")))
	require.NoError(t, f.Update(cm("ns", "a", "11")))
	require.NoError(t, f.Delete(cm("ns", "ghost", "12"))) // neither queued nor known
	// The relist lacks ns/a and ns/known: two tombstones. The watch then reports
	// ns/a's delete too, which coalesces with its tombstone.
	require.NoError(t, f.Replace([]*corev1.ConfigMap{cm("ns", "b", "13")}, "13"))
	require.NoError(t, f.Delete(cm("ns", "a", "14")))
	require.NoError(t, f.Pop(context.Background(), func(Deltas[*corev1.ConfigMap], bool) error { return nil }))

	assert.Equal(t, []string{
		"deltafifo configmaps: queued Added ns/a rv=10 (1 delta pending, queue 1)",
		"deltafifo configmaps: queued Updated ns/a rv=11 (2 deltas pending, queue 1)",
		"deltafifo configmaps: delete dropped ns/ghost: neither queued nor known",
		"deltafifo configmaps: queued Replaced ns/b rv=13 (1 delta pending, queue 2)",
		"deltafifo configmaps: queued Deleted ns/a rv=11 [tombstone] (3 deltas pending, queue 2)",
		"deltafifo configmaps: queued Deleted ns/known rv=5 [tombstone] (1 delta pending, queue 3)",
		"deltafifo configmaps: replaced 1 items, 2 tombstones inferred (queue 3)",
		"deltafifo configmaps: queued Deleted ns/a rv=14 [coalesced] (3 deltas pending, queue 3)",
		"deltafifo configmaps: popped ns/a with 3 deltas (queue 2 left)",
	}, sentences(rec.Events()))
}

func TestTheRealFIFOTracesEveryDeltaAndEachBatchMember(t *testing.T) {
	var rec trace.Recorder
	f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{Name: "configmaps", Tracer: trace.New(rec.Record)})
	require.NoError(t, f.Replace([]*corev1.ConfigMap{cm("ns", "a", "1")}, "1"))
	require.NoError(t, f.Add(cm("ns", "b", "2")))
	require.NoError(t, f.Update(cm("ns", "a", "3")))
	require.NoError(t, f.Update(cm("ns", "b", "4")))
	noop := func([]Delta[*corev1.ConfigMap], bool) error { return nil }
	require.NoError(t, f.PopBatch(context.Background(), noop)) // the ReplacedAll, alone
	require.NoError(t, f.PopBatch(context.Background(), noop)) // b and a; the second b ends the batch

	assert.Equal(t, []string{
		"realfifo configmaps: queued ReplacedAll rv=1 (queue 1)",
		"realfifo configmaps: replaced 1 items, 0 tombstones inferred (queue 1)",
		"realfifo configmaps: queued Added ns/b rv=2 (queue 2)",
		"realfifo configmaps: queued Updated ns/a rv=3 (queue 3)",
		"realfifo configmaps: queued Updated ns/b rv=4 (queue 4)",
		"realfifo configmaps: popped ReplacedAll with 1 delta (queue 3 left)",
		"realfifo configmaps: popped ns/b in a batch of 2 (queue 1 left)",
		"realfifo configmaps: popped ns/a in a batch of 2 (queue 1 left)",
	}, sentences(rec.Events()))
}

func TestQueuesWithoutATracerAllocateWhatTheyDidBeforeTracing(t *testing.T) {
	// 3 allocations per cycle for each queue, measured before the trace existed (the
	// key string, the deltas slice, the batch or queue slot). Building a trace event
	// when no tracer is set would raise it.
	obj := cm("ns", "a", "1")
	d := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{})
	r := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
	pop := func(Deltas[*corev1.ConfigMap], bool) error { return nil }
	popBatch := func([]Delta[*corev1.ConfigMap], bool) error { return nil }
	for name, cycle := range map[string]func(){
		"DeltaFIFO Add+Pop":     func() { _ = d.Add(obj); _ = d.Pop(context.Background(), pop) },
		"RealFIFO Add+PopBatch": func() { _ = r.Add(obj); _ = r.PopBatch(context.Background(), popBatch) },
	} {
		cycle()
		assert.Equal(t, 3.0, testing.AllocsPerRun(1000, cycle), name)
	}
}
