package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

func TestExportLinesPointAShellAtTheClusterAndItsKubectl(t *testing.T) {
	bin := t.TempDir()
	kubectl := filepath.Join(bin, "kubectl")
	require.NoError(t, os.WriteFile(kubectl, []byte("#!/bin/sh\n"), 0o755))
	lines := exportLines("/the/kubeconfig", bin)

	// As `eval "$(make cluster)"` would use them.
	out, err := exec.Command("sh", "-c", `eval "$1"; echo "$KUBECONFIG"; command -v kubectl`, "sh", lines).Output()
	require.NoError(t, err)
	assert.Equal(t, "/the/kubeconfig\n"+kubectl+"\n", string(out))
}

func TestExportLinesWithoutABinDirOnlySetKubeconfig(t *testing.T) {
	assert.Equal(t, "export KUBECONFIG=/the/kubeconfig\n", exportLines("/the/kubeconfig", ""))
}

func TestUpOnARunningClusterShowsBothLines(t *testing.T) {
	dir := t.TempDir()
	pid := startChild(t, "exec sleep 60")
	require.NoError(t, writeState(dir, state{
		Processes: []testenv.Process{{Name: "etcd", PID: pid}}, PIDs: []int{pid},
		Kubeconfig: "/the/kubeconfig", BinDir: "/the/bin",
	}))

	err := up(dir)

	require.Error(t, err)
	assert.Equal(t, "a cluster is already running (pids ["+strconv.Itoa(pid)+"]).\n"+
		"Use it:\n"+
		"  export KUBECONFIG=/the/kubeconfig\n"+
		"  export PATH=/the/bin:$PATH\n"+
		"or stop it: make cluster-down", err.Error())
	assert.FileExists(t, filepath.Join(dir, "state.json"), "a running cluster is left alone")
}
