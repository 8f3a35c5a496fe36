// Package heapsample measures what a benchmark op costs in memory: the peak of the
// heap's objects while it runs (sampled, garbage included) and the live heap it
// leaves behind (after a forced collection). Both force a collection, so call them
// with the benchmark timer stopped.
package heapsample

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

const (
	// objectsMetric is every allocated heap object not yet freed, including garbage
	// the collector has not swept yet: what the heap really holds at that moment.
	objectsMetric = "/memory/classes/heap/objects:bytes"
	// liveMetric is the heap the last collection found reachable.
	liveMetric = "/gc/heap/live:bytes"
)

// collect runs two garbage collections.
//
// Why two: what a sync.Pool holds survives one collection (in its victim cache) and is
// freed by the next unless it is taken again. Such memory is not kept by the work —
// the informer's listeners give their drained buffer blocks to a sync.Pool, and
// client-go and the standard library pool buffers too — and after one collection it
// would count as live: in the baseline of the next op (which then looks smaller) or in
// the live heap after this one (which then looks larger).
func collect() {
	runtime.GC()
	runtime.GC()
}

func read(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// Sampler records the peak of the heap's objects while it runs.
type Sampler struct {
	stop     chan struct{}
	done     chan struct{}
	peak     uint64
	base     uint64
	baseLive uint64
}

// Start collects garbage (twice, see collect), takes the baselines, and samples every 2ms until Stop.
func Start() *Sampler {
	collect()
	h := &Sampler{stop: make(chan struct{}), done: make(chan struct{}), base: read(objectsMetric), baseLive: read(liveMetric)}
	// Goroutine owned by the sampler: exits when Stop closes h.stop.
	go func() {
		defer close(h.done)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			h.peak = max(h.peak, read(objectsMetric))
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

// Stop ends the sampling and returns the peak of the heap's objects above the
// baseline, in MB. Garbage counts until it is swept, so this is the memory the work
// needed between collections, not what it keeps.
func (h *Sampler) Stop() float64 {
	close(h.stop)
	<-h.done
	h.peak = max(h.peak, read(objectsMetric))
	return mb(h.peak, h.base)
}

// LiveAbove collects garbage (twice, see collect) and returns the live heap above the live heap at Start,
// in MB: what the work keeps reachable (a cache, its indexes).
func (h *Sampler) LiveAbove() float64 {
	collect()
	return mb(read(liveMetric), h.baseLive)
}

func mb(v, base uint64) float64 { return float64(v-min(base, v)) / (1 << 20) }

// Finish stops the sampling and measures the live heap with b's timer stopped (both
// force a collection), returning the peak and the live heap above the baselines, in MB.
func (h *Sampler) Finish(b *testing.B) (peakMB, liveMB float64) {
	b.StopTimer()
	defer b.StartTimer()
	return h.Stop(), h.LiveAbove()
}
