package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

// stopGrace is how long down lets each program exit on SIGTERM before SIGKILL.
//
// Why short: the cluster is disposable (its directory is removed right after), so a
// program that has not exited by then is simply killed.
const stopGrace = 2 * time.Second

// down stops every program of the cluster in dir, the newest first (kwok and the
// controllers, then kube-apiserver, etcd last), saying on w what it does, and removes
// dir. Each program gets SIGTERM, then SIGKILL if it still runs after grace.
//
// Why this order: kube-apiserver's graceful shutdown waits for its clients' open
// requests and hangs without etcd. With its clients gone and etcd still up it exits in
// about a second; signalled together with them it runs on until SIGKILL.
func down(dir string, grace time.Duration, w io.Writer) error {
	s, err := readState(dir)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintln(w, "no local cluster is running")
		return os.RemoveAll(dir)
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	start := time.Now()
	ps := s.processes()
	for i := len(ps) - 1; i >= 0; i-- {
		p := ps[i]
		fmt.Fprintf(w, "stopping %s (pid %d)… ", p.Name, p.PID)
		if !testenv.AnyAlive([]int{p.PID}) {
			fmt.Fprintln(w, "already gone")
			continue
		}
		t := time.Now()
		killed, err := testenv.StopProcess(p.PID, grace)
		switch {
		case err != nil:
			fmt.Fprintln(w, "failed")
			return fmt.Errorf("stopping %s: %w", p.Name, err)
		case killed:
			fmt.Fprintf(w, "stopped in %s (SIGKILL after %s)\n", round(time.Since(t)), grace)
		default:
			fmt.Fprintf(w, "stopped in %s\n", round(time.Since(t)))
		}
	}
	fmt.Fprintf(w, "stopped the local cluster in %s; removing %s\n", round(time.Since(start)), dir)
	return os.RemoveAll(dir)
}

// round keeps durations readable: 1.2s, 40ms.
func round(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
