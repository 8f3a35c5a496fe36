// Command cluster starts and stops the long-lived local cluster behind `make cluster`
// and `make cluster-down`: the Cluster profile of internal/testrig/testenv (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok with a fake node),
// detached so that it keeps running after this command exits.
//
//	cluster up     start it (fixed ports: apiserver 6443, etcd 2379) and print, alone on
//	               stdout, the lines that export KUBECONFIG and put its kubectl first on PATH
//	cluster down   stop every process it started, saying so, and remove its directory;
//	               each gets SIGTERM, then SIGKILL after 2 s (the cluster is disposable)
//
// Its state (programs and pids, kubeconfig, logs, etcd data) lives in ~/.cache/kubeinternals/cluster.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

func main() {
	if len(os.Args) != 2 || (os.Args[1] != "up" && os.Args[1] != "down") {
		fmt.Fprintln(os.Stderr, "usage: cluster up|down")
		os.Exit(2)
	}
	dir := clusterDir()
	var err error
	if os.Args[1] == "up" {
		err = up(dir)
	} else {
		err = down(dir, stopGrace, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func clusterDir() string {
	root := os.Getenv("KUBEINTERNALS_CACHE")
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		root = filepath.Join(cache, "kubeinternals")
	}
	return filepath.Join(root, "cluster")
}

func up(dir string) error {
	if s, err := readState(dir); err == nil {
		if testenv.AnyAlive(s.PIDs) {
			binDir := s.BinDir
			if binDir == "" { // a state file of an older version
				binDir, _ = testenv.BinDir()
			}
			return fmt.Errorf("a cluster is already running (pids %v).\nUse it:\n%sor stop it: make cluster-down",
				s.PIDs, indent(exportLines(s.Kubeconfig, binDir)))
		}
		fmt.Fprintf(os.Stderr, "found a stale cluster from an earlier run in %s (its processes are gone); removing it\n", dir)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	} else if _, statErr := os.Stat(dir); statErr == nil {
		fmt.Fprintf(os.Stderr, "found a half-started cluster directory %s without state; removing it\n", dir)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	apiPort := envPort("KUBEINTERNALS_APISERVER_PORT", 6443)
	etcdPort := envPort("KUBEINTERNALS_ETCD_PORT", 2379)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	env, err := testenv.Launch(ctx, testenv.Options{
		Profile: testenv.Cluster, Dir: dir, Detached: true,
		APIServerPort: apiPort, EtcdPort: etcdPort,
	})
	if err != nil {
		if errors.Is(err, testenv.ErrNoBinaries) {
			return fmt.Errorf("%w\nbuild them first: %s", err, testenv.BuildCommand)
		}
		_ = os.RemoveAll(dir)
		return err
	}
	binDir, err := testenv.BinDir() // found by Launch already
	if err != nil {
		return err
	}
	s := state{Processes: env.Processes(), PIDs: env.PIDs(), Kubeconfig: env.Kubeconfig, BinDir: binDir}
	if err := writeState(dir, s); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "local cluster ready in %s (apiserver %s, fake node %s, logs in %s)\n",
		time.Since(start).Round(time.Second), env.Config.Host, testenv.FakeNodeName, dir)
	fmt.Print(exportLines(env.Kubeconfig, binDir))
	return nil
}

func envPort(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
