package controller

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
	"github.com/kubeinternals/informers/examples/internal/events"
)

// Event reasons and messages, as sample-controller records them (plus InvalidSpec).
const (
	// ReasonSynced is the Normal Event of a sync that changed something.
	ReasonSynced = "Synced"
	// ReasonResourceExists is the Warning Event for a Deployment the Foo does not own.
	ReasonResourceExists = "ErrResourceExists"
	// ReasonInvalidSpec is the Warning Event for a Foo the controller cannot act on.
	ReasonInvalidSpec = "InvalidSpec"

	messageSynced         = "Foo synced successfully"
	messageResourceExists = "Resource %q already exists and is not managed by Foo"
)

// ErrInvalidSpec is returned (wrapped) by a sync of a Foo that no retry can fix: the
// key is forgotten instead of retried.
var ErrInvalidSpec = errors.New("invalid Foo spec")

// ErrResourceExists is returned (wrapped) when the Deployment a Foo names exists but is
// controlled by something else. It is retried with backoff, as in sample-controller:
// the other owner may delete it.
var ErrResourceExists = errors.New("deployment exists and is not managed by the Foo")

// sync makes the world match one Foo: its Deployment exists, is ours, has the Foo's
// replicas, and the Foo's status reports the Deployment's available replicas.
//
// sample-controller: controller.go Controller.syncHandler
func (c *Controller) sync(ctx context.Context, key Key) error {
	foo, err := c.foos.Lister().Namespace(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		// Why no error: the Foo was deleted after it was queued; the garbage collector
		// removes its Deployment, and there is nothing for us to do.
		c.log.Info("foo no longer exists", "foo", key.String())
		return nil
	}
	if err != nil {
		return err
	}
	if foo.Spec.DeploymentName == "" {
		// Why forget instead of retry: the same spec fails the same way every time; the
		// next edit of the Foo enqueues it again anyway.
		c.recorder.Eventf(ctx, foo, events.TypeWarning, ReasonInvalidSpec, "Sync", "spec.deploymentName must be set")
		return fmt.Errorf("%w: foo %s: spec.deploymentName must be set", ErrInvalidSpec, key)
	}

	changed := false
	dep, err := c.deployments.Lister().Namespace(foo.Namespace).Get(foo.Spec.DeploymentName)
	if apierrors.IsNotFound(err) {
		dep, err = c.postDeployment(ctx, newDeployment(foo))
		changed = true
	}
	// Pitfall: a create can fail with AlreadyExists when the cache is behind (the
	// Deployment was created since the cache last heard). Returning the error retries
	// after a short backoff, by which time the cache has caught up.
	if err != nil {
		return err
	}
	if !metav1.IsControlledBy(dep, foo) {
		msg := fmt.Sprintf(messageResourceExists, dep.Name)
		c.recorder.Eventf(ctx, foo, events.TypeWarning, ReasonResourceExists, "Sync", "%s", msg)
		return fmt.Errorf("%w: %s", ErrResourceExists, msg)
	}
	if needsUpdate(foo, dep) {
		c.log.Info("scaling deployment", "foo", key.String(), "from", deref(dep.Spec.Replicas), "to", *foo.Spec.Replicas)
		updated := dep.DeepCopy() // Pitfall: never modify a cached object.
		updated.Spec.Replicas = foo.Spec.Replicas
		if dep, err = c.putDeployment(ctx, updated); err != nil {
			return err
		}
		changed = true
	}
	if foo.Status.AvailableReplicas != dep.Status.AvailableReplicas {
		gone, err := c.updateFooStatus(ctx, foo, dep)
		if err != nil {
			return err
		}
		if gone {
			return nil // no Event for a Foo that no longer exists
		}
		changed = true
	}
	if changed {
		c.recorder.Eventf(ctx, foo, events.TypeNormal, ReasonSynced, "Sync", messageSynced)
	}
	return nil
}

// updateFooStatus writes the Deployment's availableReplicas into the Foo's status,
// through the status subresource (a PUT to .../foos/<name>/status changes only status).
//
// A 404 means the Foo was deleted after the cache was read: there is no status left to
// write, so it is not an error (logged at Info) and gone is true: the sync ends there,
// without a retry and without a "synced" Event for an object that is gone
// (TestAFooDeletedBeforeItsStatusWriteEndsTheSyncQuietly). sample-controller returns
// the 404, and the retried sync then finds the Foo gone from the cache.
//
// sample-controller: controller.go Controller.updateFooStatus
func (c *Controller) updateFooStatus(ctx context.Context, foo *v1alpha1.Foo, dep *appsv1.Deployment) (gone bool, err error) {
	fooCopy := foo.DeepCopy() // Pitfall: never modify a cached object.
	fooCopy.Status.AvailableReplicas = dep.Status.AvailableReplicas
	_, err = c.fooAPI.Foos(foo.Namespace).UpdateStatus(ctx, fooCopy, metav1.UpdateOptions{FieldManager: Name})
	if apierrors.IsNotFound(err) {
		c.log.Info("the Foo was deleted while it was synced: no status to write", "foo", foo.Namespace+"/"+foo.Name)
		return true, nil
	}
	return false, err
}

// needsUpdate reports whether the Deployment's replica count differs from the one the
// Foo asks for. A Foo without replicas asks for nothing (the CRD allows leaving it out).
func needsUpdate(foo *v1alpha1.Foo, dep *appsv1.Deployment) bool {
	return foo.Spec.Replicas != nil && (dep.Spec.Replicas == nil || *dep.Spec.Replicas != *foo.Spec.Replicas)
}

// newDeployment is the Deployment a Foo asks for: nginx, the Foo's name and replicas,
// labels app=nginx and controller=<foo>, and a controller owner reference to the Foo so
// that deleting the Foo garbage-collects the Deployment.
//
// sample-controller: controller.go newDeployment
func newDeployment(foo *v1alpha1.Foo) *appsv1.Deployment {
	labels := map[string]string{"app": "nginx", "controller": foo.Name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:      foo.Spec.DeploymentName,
			Namespace: foo.Namespace,
			Labels:    labels,
			// Why the GVK is passed explicitly: objects from a typed cache have an
			// empty TypeMeta (the decoder clears it).
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(foo, v1alpha1.SchemeGroupVersion.WithKind("Foo")),
			},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: foo.Spec.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "nginx", Image: "nginx:latest"}},
				},
			},
		},
	}
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
