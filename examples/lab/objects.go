package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/workqueue"
)

// createConfigMaps creates n ConfigMaps prefix-0 … prefix-(n-1) in ns, eight at a
// time, each holding data k=v.
func createConfigMaps(ctx context.Context, core rest.Interface, ns, prefix string, n int, data ...string) error {
	return createConfigMapsOf(ctx, core, n, func(i int) *corev1.ConfigMap {
		return configMap(ns, fmt.Sprintf("%s-%d", prefix, i), data...)
	})
}

// createConfigMapsOf creates the n ConfigMaps made by cm(0) … cm(n-1), eight at a time.
func createConfigMapsOf(ctx context.Context, core rest.Interface, n int, cm func(i int) *corev1.ConfigMap) error {
	var mu sync.Mutex
	var errs []error
	err := workqueue.ParallelizeUntil(ctx, 8, n, func(i int) {
		obj := cm(i)
		if err := create(ctx, core, obj.Namespace, "configmaps", obj); err != nil {
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

// podTemplate is a lab-labelled PodTemplate in ns. Why PodTemplates: the lab's
// apiserver serves them without a watch cache, so a watch from a compacted
// resourceVersion reaches etcd and gets 410 Gone (see labAPIServerFlags).
func podTemplate(ns, name string) *corev1.PodTemplate {
	return &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{labLabel: "true"}},
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		}},
	}
}
