package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/workqueue"
)

// createConfigMaps creates n ConfigMaps prefix-0 … prefix-(n-1) in ns, eight at a
// time, each holding data k=v.
func createConfigMaps(ctx context.Context, core rest.Interface, ns, prefix string, n int, data ...string) error {
	var mu sync.Mutex
	var errs []error
	err := workqueue.ParallelizeUntil(ctx, 8, n, func(i int) {
		if err := create(ctx, core, ns, "configmaps", configMap(ns, fmt.Sprintf("%s-%d", prefix, i), data...)); err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	}, workqueue.ParallelizeOptions{})
	return errors.Join(err, errors.Join(errs...))
}

// updateConfigMap PUTs cm (its resourceVersion decides whether the write is
// conditional) and decodes the reply into it.
func updateConfigMap(ctx context.Context, core rest.Interface, cm *corev1.ConfigMap) error {
	return core.Put().Namespace(cm.Namespace).Resource("configmaps").Name(cm.Name).Body(cm).Do(ctx).Into(cm)
}

// deleteObject deletes resource ns/name.
func deleteObject(ctx context.Context, c rest.Interface, resource, ns, name string) error {
	return c.Delete().Namespace(ns).Resource(resource).Name(name).Do(ctx).Error()
}
