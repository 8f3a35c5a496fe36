package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is one control plane program running as a child process, its output in a
// log file next to its data.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	// done is closed when the process has exited; waitErr is set before that.
	done    chan struct{}
	waitErr error
}

// startProcess starts bin with args, writing stdout and stderr to <logDir>/<name>.log.
//
// detached processes (the long-lived `make cluster`) get their own session so that they
// outlive the command that started them. Attached processes (tests)
// get Pdeathsig=SIGKILL: if the test binary dies, the kernel kills them too.
func startProcess(name, logDir, bin string, args []string, detached bool) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log for %s: %w", name, err)
	}
	defer logFile.Close() // the child holds its own descriptor

	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if detached {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	// Owner: this process value. Exits when the child exits (stop kills it if needed);
	// for a detached child the goroutine simply ends with the command that started it.
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop sends SIGTERM, waits up to grace for the process to exit, then sends SIGKILL
// and waits for it. It is safe to call on a process that has already exited.
//
// Why bounded: kube-apiserver's graceful shutdown keeps it serving for over 10 s after
// SIGTERM; tests must not pay that, and nothing we test depends on it.
func (p *process) stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// kill sends SIGKILL and waits until the process has exited: a crash, not a shutdown.
// It is safe to call on a process that has already exited.
func (p *process) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// exitedEarly returns an error with the tail of the process's log if it has exited.
func (p *process) exitedEarly() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited: %v; last log lines:\n%s", p.name, p.waitErr, tail(p.logPath, 20))
	default:
		return nil
	}
}

// tail returns the last n lines of a file, for error messages.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Process is one program of a running control plane by name and pid: what a later
// command needs to stop a detached cluster (see StopProcess).
type Process struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
}

// StopProcess stops a process this program did not start (one of a detached cluster
// started by an earlier command): SIGTERM, then SIGKILL if it still runs after grace.
// It reports whether SIGKILL was needed, and returns an error if the process still runs
// a few seconds after SIGKILL. A process that is already gone is not an error.
//
// Why a bound: kube-apiserver's graceful shutdown waits for open requests (60 s with
// kube-controller-manager still watching; over 20 s once etcd is gone), and a
// disposable cluster gains nothing from it.
func StopProcess(pid int, grace time.Duration) (killed bool, err error) {
	if !AnyAlive([]int{pid}) {
		return false, nil
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	if waitGone(pid, grace) {
		return false, nil
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if waitGone(pid, 5*time.Second) {
		return true, nil
	}
	return true, fmt.Errorf("pid %d still runs after SIGKILL", pid)
}

// waitGone polls until the process has stopped or timeout passes, and reports whether
// it stopped. Polling, because a process we did not start cannot be waited for.
func waitGone(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for AnyAlive([]int{pid}) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// AnyAlive reports whether any of the processes still runs. A zombie (exited, not yet
// reaped by its new parent) counts as stopped.
func AnyAlive(pids []int) bool {
	for _, pid := range pids {
		if syscall.Kill(pid, 0) != nil {
			continue
		}
		f, err := statFields(pid)
		if err != nil || f[0] == "Z" {
			continue
		}
		return true
	}
	return false
}

// statFields returns the fields of /proc/PID/stat after the command name: f[0] is
// field 3 (the state), f[11] and f[12] are fields 14 and 15 (utime, stime). The
// command name (field 2) is in parentheses and may hold spaces, so the fields are
// counted from the last ')'.
func statFields(pid int) ([]string, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command name in %q", pid, s)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return nil, fmt.Errorf("/proc/%d/stat: %d fields after the command name, want at least 13", pid, len(f))
	}
	return f, nil
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// CPUTime returns the CPU time (user + system) the processes have used so far, from
// /proc/PID/stat, to the kernel's tick (10 ms).
func CPUTime(pids []int) (time.Duration, error) {
	var ticks int64
	for _, pid := range pids {
		f, err := statFields(pid)
		if err != nil {
			return 0, err
		}
		for _, field := range f[11:13] {
			v, err := strconv.ParseInt(field, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
			}
			ticks += v
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
