package incluster

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubeinternals/informers/examples/internal/steptest"
)

// Process is an example program running as a child of the test, its output kept.
type Process struct {
	cmd  *exec.Cmd
	out  *steptest.Buffer
	done chan struct{}
	err  error // set before done is closed
}

// Start runs binary with args in an environment holding only PATH, an empty HOME (so
// there is no ~/.kube/config), no KUBECONFIG, and env (a Pod's variables). The test's
// cleanup kills it if it is still running and prints its output if the test failed.
func Start(t testing.TB, binary string, args, env []string) *Process {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	p := &Process{cmd: cmd, out: &steptest.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", binary, err)
	}
	// Owner: this Process. Ends when the child exits; cleanup kills the child if needed.
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("output of %s:\n%s", binary, p.Output())
		}
	})
	return p
}

// Output is everything the program has written so far.
func (p *Process) Output() string { return p.out.String() }

// Exited is closed when the program has exited.
func (p *Process) Exited() <-chan struct{} { return p.done }

// ExitCode is the exit status once Exited is closed (-1 if killed by a signal).
func (p *Process) ExitCode() int { return p.cmd.ProcessState.ExitCode() }

// AwaitOutput waits until the output contains every one of parts, and returns the
// first line that contains them all. It fails when the program exits or timeout passes
// first.
func (p *Process) AwaitOutput(timeout time.Duration, parts ...string) (string, error) {
	deadline := time.After(timeout)
	for {
		if line, ok := p.lineWith(parts); ok {
			return line, nil
		}
		select {
		case <-p.done:
			if line, ok := p.lineWith(parts); ok {
				return line, nil
			}
			return "", fmt.Errorf("the program exited (%v) before printing a line with %q", p.err, parts)
		case <-deadline:
			return "", fmt.Errorf("no line with %q after %s", parts, timeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (p *Process) lineWith(parts []string) (string, bool) {
	for line := range strings.SplitSeq(p.Output(), "\n") {
		if containsAll(line, parts) {
			return line, true
		}
	}
	return "", false
}

func containsAll(s string, parts []string) bool {
	for _, part := range parts {
		if !strings.Contains(s, part) {
			return false
		}
	}
	return true
}

// Stop sends SIGTERM, as the kubelet does, and waits up to grace for the program to
// exit; then it kills it and returns an error. It returns the program's exit error (nil
// for status 0).
func (p *Process) Stop(grace time.Duration) error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.err
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("still running %s after SIGTERM; killed", grace)
	}
}

// Kill sends SIGKILL — a crash, or the kubelet's kill after the grace period: the
// program gets no chance to clean up (no Lease release, no drain) — and waits for it
// to exit. It returns when the signal was sent.
func (p *Process) Kill() time.Time {
	at := time.Now()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	return at
}

// RSS is the program's resident memory in bytes: VmRSS in /proc/PID/status (Linux).
func (p *Process) RSS() (int64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err != nil {
				return 0, fmt.Errorf("VmRSS %q: %w", strings.TrimSpace(rest), err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", p.cmd.Process.Pid)
}
