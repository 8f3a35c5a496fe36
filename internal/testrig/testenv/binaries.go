package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// BuildCommand is what a person runs to build the control plane binaries.
const BuildCommand = "make controlplane"

// ErrNoBinaries is returned when the control plane binaries have not been built.
var ErrNoBinaries = errors.New("control plane binaries are not built")

// binaryNames are the programs the profiles need.
var binaryNames = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok"}

// BinDir returns the directory that holds the built binaries: $KUBEINTERNALS_CONTROLPLANE_BIN
// if set, else the directory hack/controlplane/build.sh builds into for the current
// pins. It returns an error wrapping ErrNoBinaries when a binary is missing.
func BinDir() (string, error) {
	dir := os.Getenv("KUBEINTERNALS_CONTROLPLANE_BIN")
	if dir == "" {
		script := filepath.Join(repoRoot(), "hack", "controlplane", "build.sh")
		out, err := exec.Command("bash", script, "--dir").Output()
		if err != nil {
			return "", fmt.Errorf("%w: asking %s for the binary directory: %v", ErrNoBinaries, script, err)
		}
		dir = strings.TrimSpace(string(out))
	}
	for _, name := range binaryNames {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("%w: %s not found in %s; run %q", ErrNoBinaries, name, dir, BuildCommand)
		}
	}
	return dir, nil
}

// repoRoot is the root of this repository, found from this source file's location.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}
