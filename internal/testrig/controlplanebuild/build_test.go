package controlplanebuild

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeGo stands in for the go tool: `go version` answers, every other command writes
// a line of chatter to stderr and then, named by its subcommand and last argument
// ("build sigs.k8s.io/kwok/cmd/kwok"), sleeps $FAKE_GO_SLEEP seconds if that is
// $FAKE_GO_SLOW, fails with 50 lines of errors if it is $FAKE_GO_FAIL, and otherwise
// writes an empty executable wherever `go build -o` points.
//
// `go run …` only appends "run <args> bin=$KUBEINTERNALS_CONTROLPLANE_BIN" to
// $FAKE_GO_RUNS, for the Makefile's tests.
const fakeGo = `#!/bin/sh
if [ "$1" = version ]; then echo "go version go1.26.0 fake/amd64"; exit 0; fi
if [ "$1" = run ]; then echo "$* bin=${KUBEINTERNALS_CONTROLPLANE_BIN:-}" >>"$FAKE_GO_RUNS"; exit 0; fi
echo "go: downloading example.com/fake v1.0.0" >&2
out=; prev=; last=
for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; last=$a; done
[ "$1 $last" = "${FAKE_GO_SLOW:-}" ] && sleep "$FAKE_GO_SLEEP"
if [ "$1 $last" = "${FAKE_GO_FAIL:-}" ]; then
	i=1; while [ $i -le 50 ]; do echo "fake compile error $i." >&2; i=$((i+1)); done
	exit 2
fi
[ "$1" = build ] || exit 0
case "$out" in
*/) for a in "$@"; do case "$a" in */cmd/*) : >"$out${a##*/}"; chmod +x "$out${a##*/}" ;; esac; done ;;
*) : >"$out"; chmod +x "$out" ;;
esac
`

// kubernetesVersion is the k8s.io/kubernetes version hack/controlplane/go.mod
// requires, which names the build's directory.
func kubernetesVersion(t *testing.T) string {
	t.Helper()
	gomod, err := os.ReadFile("../../../hack/controlplane/go.mod")
	require.NoError(t, err)
	m := regexp.MustCompile(`k8s\.io/kubernetes (v1\.\d+\.\d+)`).FindSubmatch(gomod)
	require.NotNil(t, m, "hack/controlplane/go.mod requires k8s.io/kubernetes")
	return string(m[1])
}

type run struct {
	stdout, stderr string
	err            error
	root           string // the cache root
}

// buildScript runs build.sh without arguments (see runScript).
func buildScript(t *testing.T, root string, env ...string) run {
	t.Helper()
	return runScript(t, root, nil, env...)
}

// runScript runs build.sh with args, the fake go first on PATH, root as the cache root
// and env added to the environment. It fails the test if anything the script started
// still holds its stdout or stderr 5 s after the script has exited.
func runScript(t *testing.T, root string, args []string, env ...string) run {
	t.Helper()
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "go"), []byte(fakeGo), 0o755))
	script, err := filepath.Abs(filepath.Join("..", "..", "..", "hack", "controlplane", "build.sh"))
	require.NoError(t, err)

	cmd := exec.Command("bash", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "KUBEINTERNALS_CACHE="+root)
	cmd.Env = append(cmd.Env, env...)
	// Why pipes of our own: each reaches end of file only once every process holding
	// its write end has closed it, so a heartbeat left running after the script exits
	// shows up as output that never ends.
	stdout, stdoutW := pipe(t)
	stderr, stderrW := pipe(t)
	cmd.Stdout, cmd.Stderr = stdoutW, stderrW
	require.NoError(t, cmd.Start())
	stdoutW.Close()
	stderrW.Close()
	err = cmd.Wait()
	r := run{err: err, root: root}
	for _, out := range []struct {
		name string
		c    <-chan string
		to   *string
	}{{"stdout", stdout, &r.stdout}, {"stderr", stderr, &r.stderr}} {
		select {
		case *out.to = <-out.c:
		case <-time.After(5 * time.Second):
			t.Fatalf("the script exited, but something it started still holds its %s", out.name)
		}
	}
	return r
}

// pipe returns the write end of a new pipe and a channel that receives everything
// written to it once the pipe reaches end of file.
func pipe(t *testing.T) (<-chan string, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	c := make(chan string, 1)
	go func() {
		data, _ := io.ReadAll(r)
		c <- string(data)
	}()
	return c, w
}

func (r run) log(t *testing.T) string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(r.root, "build-*.log"))
	require.NoError(t, err)
	require.Len(t, logs, 1)
	data, err := os.ReadFile(logs[0])
	require.NoError(t, err)
	return string(data)
}

func TestBuildPrintsOnlyTheDirectoryOnStdoutAndProgressOnStderr(t *testing.T) {
	root := t.TempDir()
	r := buildScript(t, root, "KUBEINTERNALS_BUILD_HEARTBEAT=0.1", "FAKE_GO_SLOW=build k8s.io/kubernetes/cmd/kubectl", "FAKE_GO_SLEEP=1")
	require.NoError(t, r.err, r.stderr)

	dir := strings.TrimSuffix(r.stdout, "\n")
	assert.Equal(t, dir+"\n", r.stdout, "stdout is the directory and nothing else")
	assert.Regexp(t, `^`+regexp.QuoteMeta(root)+`/controlplane-`+regexp.QuoteMeta(kubernetesVersion(t))+`-[0-9a-f]{16}$`, dir)
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok", ".complete"} {
		assert.FileExists(t, filepath.Join(dir, b))
	}

	logPath := filepath.Join(root, "build-"+dir[len(dir)-16:]+".log")
	assert.Contains(t, r.stderr, "the go tool's output goes to "+logPath+"\n", "the log's path comes first")
	for _, stage := range []string{"[1/4] modules", "[2/4] kube binaries", "[3/4] etcd", "[4/4] kwok"} {
		assert.Contains(t, r.stderr, stage)
	}
	assert.Regexp(t, `(?m)^\[2/4\] kube binaries \(kube-apiserver, kube-controller-manager, kube-scheduler, kubectl\): usually ~\S+; (\d+s so far, )?about \S+ left in all$`, r.stderr)
	assert.Regexp(t, `(?m)^\[3/4\] etcd \(\./etcd\): usually ~\S+; [1-9]\d*s so far, about \S+ left in all$`, r.stderr, "after the slow stage")
	assert.Regexp(t, `(?m)^  kube binaries: \d+s elapsed, about \S+ left$`, r.stderr, "a heartbeat while the slow stage runs")
	assert.Regexp(t, `(?m)^  kube binaries: done in \d+s$`, r.stderr)
	assert.Regexp(t, `(?m)^build.sh: built the control plane in \d+s$`, r.stderr)
	assert.NotContains(t, r.stderr, "go: downloading")

	log := r.log(t)
	assert.Equal(t, 5, strings.Count(log, "go: downloading"), "two go list and three go build")
	assert.Contains(t, log, "+ cd ")

	again := buildScript(t, root)
	require.NoError(t, again.err)
	assert.Equal(t, r.stdout, again.stdout)
	assert.Empty(t, again.stderr, "a complete build is reused silently")
}

func TestBuildFailurePrintsTheLogPathAndItsTail(t *testing.T) {
	// A long heartbeat interval: a heartbeat that outlived the script would hold its
	// output for a minute, and runScript would fail.
	r := buildScript(t, t.TempDir(), "KUBEINTERNALS_BUILD_HEARTBEAT=60", "FAKE_GO_FAIL=build sigs.k8s.io/kwok/cmd/kwok")
	require.Error(t, r.err)

	assert.Empty(t, r.stdout, "no directory: nothing was built")
	logs, _ := filepath.Glob(filepath.Join(r.root, "build-*.log"))
	require.Len(t, logs, 1)
	assert.Regexp(t, `(?m)^build.sh: kwok failed after \d+s \(exit status 2\)$`, r.stderr)
	assert.Contains(t, r.stderr, "build.sh: the go tool's output is in "+logs[0]+"; its last 40 lines:\n")
	assert.Contains(t, r.stderr, "    fake compile error 11.\n")
	assert.Contains(t, r.stderr, "    fake compile error 50.\n")
	assert.NotContains(t, r.stderr, "fake compile error 10.", "only the last 40 lines")
	assert.NotContains(t, r.stderr, "kwok: done")

	entries, err := os.ReadDir(r.root)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, e.IsDir(), "%s left in the cache root: a failed build must leave no directory", e.Name())
	}
}

func TestDirOnlyPrintsTheDirectory(t *testing.T) {
	root := t.TempDir()
	r := runScript(t, root, []string{"--dir"})
	require.NoError(t, r.err)
	assert.Regexp(t, `^`+regexp.QuoteMeta(root)+`/controlplane-`+regexp.QuoteMeta(kubernetesVersion(t))+`-[0-9a-f]{16}\n$`, r.stdout)
	assert.Empty(t, r.stderr)
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	assert.Empty(t, entries, "--dir builds nothing")
}
