package main

import "strings"

// exportLines are the shell lines that point a terminal at the cluster: KUBECONFIG at
// its admin kubeconfig, and PATH first at binDir, so that `kubectl` is the one built
// with the control plane, of the apiserver's version. `cluster up` prints them, and
// only them, on stdout, so that `eval "$(make cluster)"` works.
//
// Without binDir (unknown) there is no PATH line.
//
// Why PATH too: a kubectl installed on the machine may be older or newer than the
// apiserver by more than the one minor version kubectl's skew policy allows.
func exportLines(kubeconfig, binDir string) string {
	lines := "export KUBECONFIG=" + kubeconfig + "\n"
	if binDir != "" {
		lines += "export PATH=" + binDir + ":$PATH\n"
	}
	return lines
}

// indent prefixes every line of s with two spaces.
func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}
