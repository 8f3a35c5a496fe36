package controlplane

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// madvFree is the GODEBUG setting every benchmark process of this package runs with:
// the Go runtime gives free memory back to Linux with MADV_FREE instead of
// MADV_DONTNEED. With MADV_FREE a page stays mapped until the kernel needs it (this
// machine has gigabytes free), so an op reuses the pages the last op freed without a
// page fault.
//
// Why: with MADV_DONTNEED every op faulted its memory in afresh, and what a fault
// costs in system time moved 7× from op to op on this virtual machine (130k faults took
// 0.3 s in one 100k-Pod sync and 2.1 s in another, measured with getrusage). That
// swung the client CPU of InformerSync100kPods between 2.0 and 3.6 s on client-go's
// side, an interval of 0.29–0.82: undecidable. With MADV_FREE, after the first ops
// there are almost no faults, and the client's CPU is the library's own work; the
// memory an op needs is the peak heap column's to show. The etcd and kube-apiserver
// this process starts inherit the setting; it changes how they give memory back, not
// what they do.
const madvFree = "madvdontneed=0"

// TestMain re-executes the benchmark binary with madvFree in GODEBUG when it is not
// there: the runtime reads that setting only when a process starts.
func TestMain(m *testing.M) {
	godebug := os.Getenv("GODEBUG")
	if !slices.Contains(strings.Split(godebug, ","), madvFree) {
		if godebug != "" {
			godebug += ","
		}
		env := append(os.Environ(), "GODEBUG="+godebug+madvFree)
		exe, err := os.Executable()
		if err == nil {
			err = syscall.Exec(exe, os.Args, env)
		}
		// Exec returns only when it failed: measure anyway, and say so.
		fmt.Fprintf(os.Stderr, "bench: could not re-run with GODEBUG=%s (%v); client CPU will include page faults\n", madvFree, err)
	}
	os.Exit(m.Run())
}
