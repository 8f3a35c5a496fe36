package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

func TestDownStopsTheNewestFirstAndKillsWhatIgnoresSIGTERM(t *testing.T) {
	dir := t.TempDir()
	polite := startChild(t, "exec sleep 60")
	stubborn := startChild(t, `trap "" TERM; exec sleep 60`)
	require.NoError(t, writeState(dir, state{
		Processes: []testenv.Process{{Name: "polite", PID: polite}, {Name: "stubborn", PID: stubborn}},
		PIDs:      []int{polite, stubborn},
	}))

	var out bytes.Buffer
	require.NoError(t, down(dir, 200*time.Millisecond, &out))

	assert.False(t, testenv.AnyAlive([]int{polite, stubborn}), "a process outlived down:\n%s", out.String())
	assert.NoDirExists(t, dir)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3, out.String())
	assert.Regexp(t, `^stopping stubborn \(pid `+strconv.Itoa(stubborn)+`\)… stopped in \S+ \(SIGKILL after 200ms\)$`, lines[0])
	assert.Regexp(t, `^stopping polite \(pid `+strconv.Itoa(polite)+`\)… stopped in \S+$`, lines[1])
	assert.Regexp(t, `^stopped the local cluster in \S+; removing `, lines[2])
}

func TestDownReadsAStateFileWithOnlyPIDs(t *testing.T) {
	dir := t.TempDir()
	pid := startChild(t, "exec sleep 60")
	gone := startChild(t, "exit 0")
	require.Eventually(t, func() bool { return !testenv.AnyAlive([]int{gone}) }, 5*time.Second, 10*time.Millisecond)
	old := `{"pids":[` + strconv.Itoa(pid) + `,` + strconv.Itoa(gone) + `],"kubeconfig":"/nowhere"}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "state.json"), []byte(old), 0o644))

	var out bytes.Buffer
	require.NoError(t, down(dir, 200*time.Millisecond, &out))

	assert.False(t, testenv.AnyAlive([]int{pid}))
	assert.Contains(t, out.String(), "stopping process (pid "+strconv.Itoa(gone)+")… already gone\n")
	assert.Contains(t, out.String(), "stopping process (pid "+strconv.Itoa(pid)+")… stopped in ")
	assert.NoDirExists(t, dir)
}

func TestDownWithoutACluster(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, down(filepath.Join(t.TempDir(), "cluster"), time.Second, &out))
	assert.Equal(t, "no local cluster is running\n", out.String())
}

// startChild starts `sh -c script` and returns its pid once script has replaced the
// shell with sleep (or exited), so that any trap it sets is in place.
//
// Pitfall: signalling the shell before it ran `trap "" TERM` would end it with SIGTERM,
// and the SIGKILL path would go untested.
func startChild(t *testing.T, script string) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	// Reaps the child once down has stopped it; without that it stays a zombie, which
	// AnyAlive counts as stopped anyway.
	go func() { _ = cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	require.Eventually(t, func() bool {
		argv, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		return err != nil || bytes.HasPrefix(argv, []byte("sleep\x00"))
	}, 5*time.Second, 5*time.Millisecond)
	return pid
}
