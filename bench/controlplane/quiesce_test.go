package controlplane

import (
	"context"
	"runtime/debug"
	"testing"
	"time"

	"github.com/kubeinternals/informers/bench/internal/cpusample"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

// quiesce prepares one op, with b's timer stopped: it gives this process's free
// memory back to the operating system, has the kube-apiserver collect its garbage
// (see collectAPIServerGarbage), and waits until the control plane is idle.
//
// Why: the client's CPU per op is the figure that decides these rows, and two things
// outside the op moved it by up to 3× between rounds of the 100k-Pod syncs (measured
// with getrusage and the runtime's metrics, one op a round):
//   - the runtime's background scavenger. How much of the previous op's free heap it
//     had given back by the time this op started decided how much this op had to
//     take back (76k or 138k page faults in one sync). Giving every free page back
//     first leaves it nothing to do during the op, the same on both sides. The
//     process gives pages back with MADV_FREE (see madvFree in main_test.go), so
//     they stay mapped and taking them back costs no fault.
//   - an apiserver still busy with the previous op (collecting the garbage of serving
//     100k Pods, finishing a cancelled watch). The client then waited on a slow
//     stream: 42k context switches instead of 13k, 2.2 s of system time instead of
//     0.5 s. Waiting until etcd and the kube-apiserver use under a tenth of a core
//     starts every op against the same quiet server.
//
// It waits at most 20 s, then starts the op anyway.
func quiesce(b *testing.B) {
	b.StopTimer()
	defer b.StartTimer()
	debug.FreeOSMemory()
	collectAPIServerGarbage(b)
	const window, idle = 100 * time.Millisecond, 10 * time.Millisecond // a tenth of a core
	deadline := time.Now().Add(20 * time.Second)
	prev, err := testenv.CPUTime(controlPlane.pids)
	if err != nil {
		b.Logf("quiesce: %v; not waiting for the control plane", err)
		return
	}
	for time.Now().Before(deadline) {
		time.Sleep(window)
		cur, err := testenv.CPUTime(controlPlane.pids)
		if err != nil {
			b.Logf("quiesce: %v; not waiting for the control plane", err)
			return
		}
		if cur-prev <= idle {
			return
		}
		prev = cur
	}
	b.Logf("quiesce: the control plane was still busy after 20 s")
}

// quietLoop is cpusample.Loop with every op, the warm-up's included, quiesced first.
func quietLoop(b *testing.B, op func()) {
	cpusample.LoopPrepared(b, func() { quiesce(b) }, op)
}

// collectAPIServerGarbage asks the kube-apiserver to run a garbage collection now,
// through its profiling endpoint (GET /debug/pprof/heap?gc=1 collects before it
// writes the heap profile; --profiling is on by default).
//
// Why: an idle apiserver does not collect. The garbage of serving the last op (100k
// Pods encoded is gigabytes) waited for the next op's allocations to start a
// collection, inside that op: the apiserver then spent 4–4.7 s of CPU on an op it
// served with 2.1–2.5 s otherwise, fed the stream slower, and the client woke twice
// as often (27k context switches instead of 13k) and spent more CPU waiting for it.
func collectAPIServerGarbage(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := controlPlane.client.Discovery().RESTClient().Get().AbsPath("/debug/pprof/heap").Param("gc", "1").DoRaw(ctx); err != nil {
		b.Logf("quiesce: collecting the apiserver's garbage: %v", err)
	}
}
