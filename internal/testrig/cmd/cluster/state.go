package main

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

// state is what `cluster up` leaves in state.json for `cluster down` and for the next
// `cluster up`.
type state struct {
	// Processes are the cluster's programs in start order; down stops them in reverse.
	Processes []testenv.Process `json:"processes,omitempty"`
	// PIDs are the same processes' ids. Why still written: it is all a state file of an
	// older version holds, and what an older `cluster down` reads.
	PIDs       []int  `json:"pids"`
	Kubeconfig string `json:"kubeconfig"`
	// BinDir holds the binaries the cluster runs, kubectl among them. Empty in a state
	// file of an older version.
	BinDir string `json:"binDir,omitempty"`
}

// processes returns the cluster's programs in start order. A state file of an older
// version has only pids; their programs are then unnamed.
func (s state) processes() []testenv.Process {
	if len(s.Processes) > 0 {
		return s.Processes
	}
	ps := make([]testenv.Process, len(s.PIDs))
	for i, pid := range s.PIDs {
		ps[i] = testenv.Process{Name: "process", PID: pid}
	}
	return ps
}

func readState(dir string) (state, error) {
	var s state
	data, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(data, &s)
}

func writeState(dir string, s state) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "state.json"), data, 0o644)
}
