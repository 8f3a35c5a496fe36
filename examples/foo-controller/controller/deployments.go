package controller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/kube"
)

// newDeploymentClient returns a REST client for apps/v1: the controller's only writes to
// Deployments are the two below, so a generated clientset would be a lot of code for
// two requests.
func newDeploymentClient(cfg *rest.Config) (rest.Interface, error) {
	rc, _, err := kube.NewRESTClient(cfg, appsv1.SchemeGroupVersion, nil, appsv1.AddToScheme)
	return rc, err
}

// postDeployment POSTs d and returns the Deployment as stored.
func (c *Controller) postDeployment(ctx context.Context, d *appsv1.Deployment) (*appsv1.Deployment, error) {
	out := &appsv1.Deployment{}
	err := c.depAPI.Post().Namespace(d.Namespace).Resource("deployments").
		Param("fieldManager", Name).Body(d).Do(ctx).Into(out)
	return out, err
}

// putDeployment PUTs d. d carries the resourceVersion it was read at, so a write that
// races with another writer fails with 409 Conflict (and is retried) instead of
// overwriting the other change.
func (c *Controller) putDeployment(ctx context.Context, d *appsv1.Deployment) (*appsv1.Deployment, error) {
	out := &appsv1.Deployment{}
	err := c.depAPI.Put().Namespace(d.Namespace).Resource("deployments").Name(d.Name).
		Param("fieldManager", Name).Body(d).Do(ctx).Into(out)
	return out, err
}
