package browser

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// driver is one chromedriver child process, in its own process group, its output kept
// in memory for error messages.
type driver struct {
	cmd *exec.Cmd
	out *tailBuffer
	// done is closed when the process has exited; waitErr is set before that.
	done    chan struct{}
	waitErr error
}

// startDriver starts chromedriver on 127.0.0.1:port with home as its $HOME.
//
// Why Setpgid: chromedriver's chromium children join its group, so one kill(-pgid)
// stops the whole tree even when chromedriver cannot be asked nicely. Why Pdeathsig:
// if the test binary is killed, the kernel kills chromedriver too.
// Why a private $HOME: chromium writes its crash database, dconf and caches under
// $HOME; pointing it into the session's temporary directory leaves nothing in /root
// and lets Close find every straggler by that directory's path (see sweep).
func startDriver(bin string, port int, home string) (*driver, error) {
	cmd := exec.Command(bin, "--port="+strconv.Itoa(port))
	out := &tailBuffer{max: 32 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = withEnv(os.Environ(), "HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// Pitfall: with a non-file Stdout, Wait also waits for every process holding the
	// output pipe, and every chromium process inherits it from chromedriver (seen in
	// /proc/PID/fd/1); one lingering helper would block Wait for as long as it lives.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	d := &driver{cmd: cmd, out: out, done: make(chan struct{})}
	// Owner: this driver. Exits when chromedriver exits (stop kills it), at the latest
	// WaitDelay after that.
	go func() {
		d.waitErr = cmd.Wait()
		close(d.done)
	}()
	return d, nil
}

// exited returns a non-nil error naming the exit status if chromedriver has exited.
func (d *driver) exited() error {
	select {
	case <-d.done:
		return fmt.Errorf("chromedriver exited: %v", d.waitErr)
	default:
		return nil
	}
}

// stop kills chromedriver's whole process group and waits for chromedriver to exit.
// It is safe to call more than once.
func (d *driver) stop() {
	// Pitfall: the group id is chromedriver's pid, valid only while some member lives;
	// once all are gone the kill fails with ESRCH, which is the desired state anyway.
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	<-d.done
}

// sweep kills the processes whose command line mentions a path under dir and waits up to grace
// for them to be gone. It returns an error listing any that survive.
//
// Why: chromium's crashpad handlers leave chromedriver's process group (they start
// their own) and outlive a killed browser for a moment. They all carry the session's
// directory in their arguments (--user-data-dir, or the crash database under the
// private $HOME), which identifies exactly this session's processes and no others.
func sweep(dir string, grace time.Duration) error {
	deadline := time.Now().Add(grace)
	for {
		// Why the separator: "/tmp/x-12" must not match a neighbour "/tmp/x-123".
		pids := processesMentioning(dir + string(os.PathSeparator))
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes still running after %s: %v", grace, pids)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processesMentioning returns the live (not zombie) processes whose command line
// contains s.
func processesMentioning(s string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmdline, []byte(s)) {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The state is the field after the parenthesised command name; a zombie has
		// exited and only waits for its parent (often init) to reap it.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// freePort returns a TCP port that was free on 127.0.0.1 a moment ago.
//
// Pitfall: another process may take it before chromedriver binds it; chromedriver then
// exits, and Launch reports that with chromedriver's output.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	return port, nil
}

// withEnv returns env with each "KEY=value" of set replacing any earlier KEY.
func withEnv(env []string, set ...string) []string {
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		key, _, _ := strings.Cut(kv, "=")
		replaced := false
		for _, s := range set {
			if strings.HasPrefix(s, key+"=") {
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}

// tailBuffer is an io.Writer that keeps the last max bytes written, safe for
// concurrent use (exec copies stdout and stderr from two goroutines).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

// Write appends p, dropping the oldest bytes beyond max. It never fails.
func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// Tail returns the last n lines written, for error messages.
func (b *tailBuffer) Tail(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := strings.Split(strings.TrimRight(string(b.buf), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
