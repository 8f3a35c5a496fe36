package testenv_test

import "syscall"

// processAlive reports whether a process with this pid exists (signal 0 probes it).
func processAlive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}
