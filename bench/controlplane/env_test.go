package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/internal/testrig/sampleobjects"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

// The control plane is started once per benchmark process, on first use, and left
// running until the process exits (its children die with it): TestMain (main_test.go)
// does not start or stop it.
// Each data set is created once, on first use, so that running one benchmark
// (BENCH=…) creates only what it reads.
var controlPlane struct {
	once sync.Once
	cfg  *rest.Config
	pids []int
	err  error
	// client is what quiesce uses to reach the kube-apiserver.
	client *kubernetes.Clientset
}

// benchConfig starts the control plane, once, and returns a config with client-side
// rate limiting off: neither side should wait on a token bucket.
func benchConfig(b *testing.B) *rest.Config {
	b.Helper()
	controlPlane.once.Do(func() {
		if _, err := testenv.BinDir(); err != nil {
			controlPlane.err = err
			return
		}
		// A fixed, reused directory: the environment outlives every benchmark, so
		// nothing would remove a temporary one.
		dir := filepath.Join(os.TempDir(), "kubeinternals-bench-controlplane")
		_ = os.RemoveAll(dir)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		env, err := testenv.Launch(ctx, testenv.Options{Dir: dir})
		if err != nil {
			controlPlane.err = err
			return
		}
		cfg := rest.CopyConfig(env.Config)
		cfg.QPS, cfg.Burst = -1, 0
		controlPlane.cfg = cfg
		controlPlane.pids = env.PIDs()
		controlPlane.client, controlPlane.err = kubernetes.NewForConfig(cfg)
	})
	if controlPlane.err != nil {
		b.Skipf("skipping: %v (build the control plane with %q)", controlPlane.err, testenv.BuildCommand)
	}
	return controlPlane.cfg
}

// dataSet is a namespace of n objects created once on first use.
type dataSet struct {
	namespace string
	resource  string
	n         int
	object    func(i int) any

	once sync.Once
	err  error
}

// ensure creates the data set's namespace and objects, once, and fails the
// benchmark if that did not work.
func (d *dataSet) ensure(b *testing.B, cfg *rest.Config) {
	b.Helper()
	d.once.Do(func() {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		d.err = sampleobjects.Create(ctx, cfg, d.namespace, d.resource, d.n, d.object)
		fmt.Fprintf(os.Stderr, "bench: created %d %s in %s in %s\n", d.n, d.resource, d.namespace, time.Since(start).Round(time.Second))
	})
	if d.err != nil {
		b.Fatalf("creating %d %s: %v", d.n, d.resource, d.err)
	}
}

// configMaps10k: 10,000 small ConfigMaps (sampleobjects.ConfigMap).
var configMaps10k = &dataSet{namespace: "bench-configmaps", resource: "configmaps", n: 10_000, object: sampleobjects.ConfigMap}

// pods100k: 100,000 Pods as a Deployment's ReplicaSet would make them
// (sampleobjects.Pod), never scheduled. Each carries the managedFields entry the
// apiserver records for its create.
var pods100k = &dataSet{namespace: "bench-pods", resource: "pods", n: 100_000, object: sampleobjects.Pod}
