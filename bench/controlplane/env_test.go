package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/internal/testenv"
	"github.com/kubeinternals/informers/listwatch"
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
		d.err = createObjects(ctx, cfg, d.namespace, d.resource, d.n, d.object)
		fmt.Fprintf(os.Stderr, "bench: created %d %s in %s in %s\n", d.n, d.resource, d.namespace, time.Since(start).Round(time.Second))
	})
	if d.err != nil {
		b.Fatalf("creating %d %s: %v", d.n, d.resource, d.err)
	}
}

// createObjects creates the namespace, then n objects of resource in it from 8
// goroutines, each POSTed as JSON.
func createObjects(ctx context.Context, cfg *rest.Config, namespace, resource string, n int, object func(i int) any) error {
	core, err := listwatch.NewRESTClient(cfg, corev1.SchemeGroupVersion)
	if err != nil {
		return err
	}
	post := func(resource, namespace string, obj any) error {
		body, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		req := core.Post().Resource(resource)
		if namespace != "" {
			req = req.Namespace(namespace)
		}
		return req.Body(body).SetHeader("Content-Type", "application/json").Do(ctx).Error()
	}
	ns := corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := post("namespaces", "", ns); err != nil {
		return err
	}
	work := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		// Goroutines owned by this call: workers that exit when work is closed.
		wg.Go(func() {
			var first error
			for i := range work {
				if err := post(resource, namespace, object(i)); err != nil && first == nil {
					first = err
				}
			}
			errs <- first
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// configMaps10k: 10,000 small ConfigMaps, one data key each.
var configMaps10k = &dataSet{namespace: "bench-configmaps", resource: "configmaps", n: 10_000, object: func(i int) any {
	return corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i), Labels: map[string]string{"app": "bench"}},
		Data:       map[string]string{"key": fmt.Sprintf("value-%d", i)},
	}
}}

// pods100k: 100,000 Pods as a Deployment's ReplicaSet would make them (labels, an
// owner reference, one container with resources), never scheduled. Each carries the
// managedFields entry the apiserver records for its create.
var pods100k = &dataSet{namespace: "bench-pods", resource: "pods", n: 100_000, object: func(i int) any {
	ctrl := true
	return corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:   fmt.Sprintf("web-%06d", i),
			Labels: map[string]string{"app": "web", "pod-template-hash": "5d9c7b8f4", "shard": fmt.Sprint(i % 100)},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-5d9c7b8f4",
				UID: "4f6a1c2e-0000-4000-8000-000000000001", Controller: &ctrl,
			}},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "web", Image: "registry.example/web:1.2.3",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			Env:   []corev1.EnvVar{{Name: "MODE", Value: "production"}},
		}}},
	}
}}
