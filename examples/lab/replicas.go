package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kubeinternals/informers/internal/metricstext"
)

// replica is one foo-controller process started by a scenario: the real binary, so that
// it can be killed (SIGKILL) and paused (SIGSTOP) as a pod's process can.
type replica struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited

	mu    sync.Mutex
	lines []logLine // its JSON log, parsed; guarded by mu
}

// logLine is one line of a replica's JSON log: its time, message and attributes.
type logLine struct {
	Time  time.Time
	Msg   string
	Attrs map[string]any
	Raw   string
}

// buildFooController builds examples/foo-controller into dir with the go command on
// $PATH (the one `make lab` runs), and returns the binary's path.
func buildFooController(ctx context.Context, dir string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building foo-controller needs the go command on $PATH: %w", err)
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	out := filepath.Join(dir, "foo-controller")
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", out, "./examples/foo-controller")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building foo-controller: %w\n%s", err, b)
	}
	return out, nil
}

// startReplica runs binary with args and $KUBECONFIG set to kubeconfig. The process
// dies with the lab (Pdeathsig); stop it with kill, or wait for it to exit.
func startReplica(name, binary, kubeconfig string, args ...string) (*replica, error) {
	r := &replica{name: name, done: make(chan struct{})}
	r.cmd = exec.Command(binary, args...)
	r.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	r.cmd.Stderr = r.cmd.Stdout
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting replica %s: %w", name, err)
	}
	// Goroutine owned by the replica: reads its log until the process closes it, then
	// reaps the process and closes done.
	go func() {
		r.read(out)
		_ = r.cmd.Wait()
		close(r.done)
	}()
	return r, nil
}

// read parses the replica's output, one JSON log line at a time.
func (r *replica) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		raw := sc.Text()
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			m = map[string]any{"msg": raw} // not JSON: keep it as the message
		}
		l := logLine{Msg: fmt.Sprint(m["msg"]), Attrs: m, Raw: raw}
		if s, ok := m["time"].(string); ok {
			l.Time, _ = time.Parse(time.RFC3339Nano, s)
		}
		if l.Time.IsZero() {
			l.Time = time.Now()
		}
		r.mu.Lock()
		r.lines = append(r.lines, l)
		r.mu.Unlock()
	}
}

// log is what the replica has logged so far.
func (r *replica) log() []logLine {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]logLine(nil), r.lines...)
}

// first is the first line whose message starts with msg and whose attributes hold
// want (compared as printed), at or after since.
func (r *replica) first(since time.Time, msg string, want map[string]string) (logLine, bool) {
	for _, l := range r.log() {
		if l.Time.Before(since) || !strings.HasPrefix(l.Msg, msg) {
			continue
		}
		ok := true
		for k, v := range want {
			ok = ok && fmt.Sprint(l.Attrs[k]) == v
		}
		if ok {
			return l, true
		}
	}
	return logLine{}, false
}

// awaitLog waits for first(since, msg, want), or for the replica to exit without it.
func (r *replica) awaitLog(ctx context.Context, within time.Duration, since time.Time, msg string, want map[string]string) (logLine, error) {
	var got logLine
	err := await(ctx, within, fmt.Sprintf("replica %s to log %q", r.name, msg), func() bool {
		var ok bool
		got, ok = r.first(since, msg, want)
		return ok || r.exited()
	})
	if err == nil && got.Msg == "" {
		err = fmt.Errorf("replica %s exited without logging %q; its log:\n%s", r.name, msg, r.tail(20))
	}
	return got, err
}

func (r *replica) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// exitCode is the process's exit status, -1 if killed by a signal or still running.
func (r *replica) exitCode() int {
	if !r.exited() {
		return -1
	}
	return r.cmd.ProcessState.ExitCode()
}

// signal sends sig and returns when it was sent.
func (r *replica) signal(sig syscall.Signal) (time.Time, error) {
	at := time.Now()
	return at, r.cmd.Process.Signal(sig)
}

// kill sends SIGKILL (a crash: no release, no drain) and waits for the exit.
func (r *replica) kill() time.Time {
	at, _ := r.signal(syscall.SIGKILL)
	<-r.done
	return at
}

// stop sends SIGTERM and waits up to grace for the exit, then kills.
func (r *replica) stop(grace time.Duration) error {
	if r.exited() {
		return nil
	}
	_ = r.cmd.Process.Signal(syscall.SIGCONT) // a paused process cannot handle SIGTERM
	_, _ = r.signal(syscall.SIGTERM)
	select {
	case <-r.done:
		return nil
	case <-time.After(grace):
		r.kill()
		return errors.New("replica " + r.name + " ignored SIGTERM for " + grace.String())
	}
}

// tail is the last n raw lines of the replica's log.
func (r *replica) tail(n int) string {
	lines := r.log()
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l.Raw)
		b.WriteByte('\n')
	}
	return b.String()
}

// scrapeMetrics reads p's /metrics at addr into series → value.
func scrapeMetrics(ctx context.Context, addr string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/metrics: %s", addr, resp.Status)
	}
	return metricstext.Parse(resp.Body)
}
