// Package cpusample measures what a benchmark op costs the client in CPU: the user and
// system time of this process (every thread: the op's goroutines, the garbage
// collector, the runtime) between Start and Stop.
//
// Why beside wall time: against a control plane, the kube-apiserver and etcd run in
// other processes on the same cores, so an op's wall time swings with their
// scheduling (intervals of 0.2–7× on 2 cores); the client's own CPU time does not
// include theirs, and is what a library can change.
package cpusample

import (
	"syscall"
	"testing"
	"time"

	"github.com/kubeinternals/informers/bench/internal/sidebyside"
)

// Unit is the metric's name in benchmark output: client CPU milliseconds per op.
const Unit = "cpu-ms/op"

// Now returns this process's CPU time so far (user + system).
func Now() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Total accumulates the CPU time of the measured regions of a benchmark's ops.
type Total struct {
	sum   time.Duration
	ops   int
	start time.Duration
}

// Start begins one op's measured region.
func (t *Total) Start() { t.start = Now() }

// Stop ends the region begun by Start and counts one op.
func (t *Total) Stop() {
	t.sum += Now() - t.start
	t.ops++
}

// Report reports the mean CPU time per op, in Unit.
func (t *Total) Report(b *testing.B) {
	if t.ops == 0 {
		return
	}
	b.ReportMetric(float64(t.sum)/float64(time.Millisecond)/float64(t.ops), Unit)
}

// Loop is sidebyside.Loop with the client CPU of every timed op measured and
// reported in Unit (the untimed warm-up op is not). Use it for ops with no untimed
// part of their own.
func Loop(b *testing.B, op func()) { LoopPrepared(b, nil, op) }

// LoopPrepared is Loop with prepare run before every op, the warm-up's included,
// outside the measured CPU region. prepare stops b's timer itself if what it does
// must not count as the op's time.
func LoopPrepared(b *testing.B, prepare, op func()) {
	var t Total
	warmUp := true
	sidebyside.Loop(b, func() {
		if prepare != nil {
			prepare()
		}
		if warmUp {
			warmUp = false
			op()
			return
		}
		t.Start()
		op()
		t.Stop()
	})
	t.Report(b)
}
