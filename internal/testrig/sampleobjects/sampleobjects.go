// Package sampleobjects is a test rig: the objects the benchmarks (bench/controlplane)
// and the cache-sizing test (docs/sizing.md) create on a real kube-apiserver, one
// shape each, and the function that creates many of them. The figures of both are
// measured on these shapes, so they live in one place.
package sampleobjects

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/listwatch"
)

// ConfigMap is the i-th small ConfigMap: one label, one data key.
func ConfigMap(i int) any {
	return corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i), Labels: map[string]string{"app": "bench"}},
		Data:       map[string]string{"key": fmt.Sprintf("value-%d", i)},
	}
}

// Pod is the i-th Pod as a Deployment's ReplicaSet would make it (three labels, an
// owner reference, one container with a port and an environment variable), never
// scheduled. The apiserver adds the managedFields entry of its create.
func Pod(i int) any {
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
}

// Create creates the namespace, then n objects of a core/v1 resource in it from 8
// goroutines, each POSTed as JSON.
func Create(ctx context.Context, cfg *rest.Config, namespace, resource string, n int, object func(i int) any) error {
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
	return InParallel(n, func(i int) error { return post(resource, namespace, object(i)) })
}

// InParallel calls do(0) … do(n-1) from 8 goroutines, as 8 clients creating objects
// at once, and returns the first error any call returned (every call runs).
func InParallel(n int, do func(i int) error) error {
	work := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		// Goroutines owned by this call: workers that exit when work is closed.
		wg.Go(func() {
			var first error
			for i := range work {
				if err := do(i); err != nil && first == nil {
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
