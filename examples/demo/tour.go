package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

const demoNamespace = "kubeinternals-demo"

// deploymentTour narrates a Deployment's life on a real cluster through plain REST calls.
func deploymentTour(ctx context.Context, log *slog.Logger, cfg *rest.Config) error {
	core, err := restClient(cfg, corev1.SchemeGroupVersion)
	if err != nil {
		return err
	}
	apps, err := restClient(cfg, appsv1.SchemeGroupVersion)
	if err != nil {
		return err
	}

	var nodes corev1.NodeList
	if err := core.Get().Resource("nodes").Do(ctx).Into(&nodes); err != nil {
		return fmt.Errorf("step 1: listing nodes: %w", err)
	}
	for _, n := range nodes.Items {
		log.Info("step 1: node", "name", n.Name, "ready", nodeReady(n))
	}
	if len(nodes.Items) == 0 {
		return fmt.Errorf("step 1: the cluster has no nodes")
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: demoNamespace}}
	if err := core.Post().Resource("namespaces").Body(ns).Do(ctx).Error(); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", demoNamespace, err)
	}
	labels := map[string]string{"app": "demo-web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "demo-web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:latest"}}},
			},
		},
	}
	if err := apps.Post().Namespace(demoNamespace).Resource("deployments").Body(d).Do(ctx).Error(); err != nil {
		return fmt.Errorf("step 2: creating Deployment demo-web: %w", err)
	}
	log.Info("step 2: created Deployment demo-web with 2 replicas", "namespace", demoNamespace)

	if err := poll(ctx, func() (bool, error) {
		var got appsv1.Deployment
		if err := apps.Get().Namespace(demoNamespace).Resource("deployments").Name("demo-web").Do(ctx).Into(&got); err != nil {
			return false, err
		}
		log.Info("step 3: waiting for the Deployment to become Available", "availableReplicas", got.Status.AvailableReplicas)
		return got.Status.AvailableReplicas == 2, nil
	}); err != nil {
		return fmt.Errorf("step 3: %w", err)
	}
	var rss appsv1.ReplicaSetList
	if err := apps.Get().Namespace(demoNamespace).Resource("replicasets").Do(ctx).Into(&rss); err != nil || len(rss.Items) != 1 {
		return fmt.Errorf("step 3: expected one ReplicaSet, got %d (err %v)", len(rss.Items), err)
	}
	rs := rss.Items[0].Name
	log.Info("step 3: the Deployment is Available: its ReplicaSet's pods run on the node", "replicaset", rs)

	if err := apps.Delete().Namespace(demoNamespace).Resource("deployments").Name("demo-web").
		Body(&metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}).Do(ctx).Error(); err != nil {
		return fmt.Errorf("step 4: deleting the Deployment: %w", err)
	}
	log.Info("step 4: deleted the Deployment; waiting for garbage collection to remove its ReplicaSet", "replicaset", rs)
	if err := poll(ctx, func() (bool, error) {
		err := apps.Get().Namespace(demoNamespace).Resource("replicasets").Name(rs).Do(ctx).Error()
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}); err != nil {
		return fmt.Errorf("step 4: %w", err)
	}
	log.Info("step 4: the ReplicaSet is gone: the garbage collector followed its owner reference")
	if err := core.Delete().Resource("namespaces").Name(demoNamespace).Do(ctx).Error(); err != nil {
		return fmt.Errorf("deleting namespace %s: %w", demoNamespace, err)
	}
	return nil
}

func nodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// poll calls cond every 500ms until it returns true, or ctx ends.
func poll(ctx context.Context, cond func() (bool, error)) error {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), lastErr)
		case <-tick.C:
		}
	}
}

func restClient(cfg *rest.Config, gv schema.GroupVersion) (*rest.RESTClient, error) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := appsv1.AddToScheme(s); err != nil {
		return nil, err
	}
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	if gv.Group == "" {
		c.APIPath = "/api"
	}
	c.NegotiatedSerializer = serializer.NewCodecFactory(s).WithoutConversion()
	return rest.RESTClientFor(c)
}
