package controller

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
)

// fooHandlers are the Foo informer's handlers: every add and update enqueues the Foo.
func (c *Controller) fooHandlers() informer.HandlerFuncs[*v1alpha1.Foo] {
	return informer.HandlerFuncs[*v1alpha1.Foo]{
		AddFunc: func(foo *v1alpha1.Foo, _ bool) {
			c.entered(FooHandler)
			c.enqueueFoo(foo)
		},
		UpdateFunc: func(_, foo *v1alpha1.Foo) {
			c.entered(FooHandler)
			c.enqueueFoo(foo)
		},
	}
}

// deploymentHandlers are the Deployment informer's handlers: each follows the owner
// reference to the Foo (see handleDeployment).
func (c *Controller) deploymentHandlers() informer.HandlerFuncs[*appsv1.Deployment] {
	return informer.HandlerFuncs[*appsv1.Deployment]{
		AddFunc: func(d *appsv1.Deployment, _ bool) {
			c.entered(DeploymentHandler)
			c.handleDeployment(d)
		},
		UpdateFunc: func(oldDep, newDep *appsv1.Deployment) {
			c.entered(DeploymentHandler)
			c.onDeploymentUpdate(oldDep, newDep)
		},
		DeleteFunc: func(d informer.DeletedObject[*appsv1.Deployment]) {
			c.entered(DeploymentHandler)
			c.onDeploymentDelete(d)
		},
	}
}

// enqueueFoo queues the Foo's key. Every Foo add and update lands here, resyncs
// included: the periodic resync is what re-checks a Foo whose sync failed for a reason
// no event will announce.
//
// sample-controller: controller.go Controller.enqueueFoo
func (c *Controller) enqueueFoo(foo *v1alpha1.Foo) {
	c.queue.Add(Key{Namespace: foo.Namespace, Name: foo.Name})
}

// onDeploymentUpdate passes a real change on to handleDeployment and drops resyncs.
//
// Why: a resync re-delivers every cached Deployment every 30s with old and new sharing
// one resourceVersion. Nothing changed, and the Foo's own resync already re-checks the
// Foo, so following the owner reference would only double the work.
//
// sample-controller: controller.go NewController (the Deployment UpdateFunc)
func (c *Controller) onDeploymentUpdate(oldDep, newDep *appsv1.Deployment) {
	if oldDep.ResourceVersion == newDep.ResourceVersion {
		return
	}
	c.handleDeployment(newDep)
}

// onDeploymentDelete handles a deleted Deployment. d.FinalStateUnknown is non-nil when
// the informer inferred the delete from a relist (it missed the watch event):
// d.OptionalObj is then the last state this process saw, which still carries the owner
// reference we need.
//
// Why re-enqueue on delete at all: someone deleted the Deployment a Foo owns; the sync
// recreates it.
//
// sample-controller: controller.go Controller.handleObject (the
// DeletedFinalStateUnknown branch)
func (c *Controller) onDeploymentDelete(d informer.DeletedObject[*appsv1.Deployment]) {
	if d.FinalStateUnknown != nil {
		c.log.Debug("deployment delete inferred by a relist", "deployment", d.GetKey())
	}
	c.handleDeployment(d.OptionalObj)
}

// handleDeployment enqueues the Foo that controls d, if any, and if that Foo still exists
// in the cache.
//
// sample-controller: controller.go Controller.handleObject
func (c *Controller) handleDeployment(d *appsv1.Deployment) {
	key, ok := ownerFoo(d)
	if !ok {
		return
	}
	// Why look the Foo up: a Deployment whose Foo is gone is about to be garbage
	// collected; there is nothing to sync, and the sync would only log "not found".
	if _, err := c.foos.Lister().Namespace(key.Namespace).Get(key.Name); err != nil {
		c.log.Debug("ignoring deployment of a Foo not in the cache", "deployment", d.Namespace+"/"+d.Name, "foo", key.String())
		return
	}
	if c.tracer != nil {
		c.tracer.Map("deployments", indexer.ObjectKey(d.Namespace, d.Name), key.String())
	}
	c.queue.Add(key)
}

// ownerFoo returns the key of the Foo that controls obj: the owner reference marked
// controller=true, if it names a Foo of our API group. Owner references are always in
// the same namespace as the object (cluster-scoped owners aside), so the namespace is
// obj's.
//
// Pitfall: comparing only Kind, as sample-controller does, would follow a reference to
// some other group's "Foo". We compare the group too (any version: a group's versions
// share one object).
func ownerFoo(obj metav1.Object) (Key, bool) {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "Foo" {
		return Key{}, false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.Group != v1alpha1.SchemeGroupVersion.Group {
		return Key{}, false
	}
	return Key{Namespace: obj.GetNamespace(), Name: ref.Name}, true
}
