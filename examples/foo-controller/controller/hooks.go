package controller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
	"github.com/kubeinternals/informers/informer"
)

// Hooks let an experiment change how the controller behaves without a second copy
// of it: the explorer's "fail the next reconciles" and "slow a handler" buttons are
// built on them. The zero value changes nothing.
type Hooks struct {
	// BeforeSync is called by a worker before each sync of key. If it returns an
	// error the sync does not run, and the error is the sync's: logged, traced and
	// retried with backoff like any other failure.
	BeforeSync func(ctx context.Context, key Key) error
	// BeforeHandler is called at the start of every event handler call with the
	// handler's name ("enqueueFoo" or "handleDeployment"). It runs on that handler's
	// own goroutine, so sleeping in it slows that handler and no other.
	BeforeHandler func(handler string)
}

// Handler names, as the trace reports them (HandlerOptions.Name).
const (
	FooHandler        = "enqueueFoo"
	DeploymentHandler = "handleDeployment"
)

// syncHooked is sync behind Hooks.BeforeSync.
func (c *Controller) syncHooked(ctx context.Context, key Key) error {
	if c.hooks.BeforeSync != nil {
		if err := c.hooks.BeforeSync(ctx, key); err != nil {
			return err
		}
	}
	return c.sync(ctx, key)
}

// entered calls Hooks.BeforeHandler for handler, if set.
func (c *Controller) entered(handler string) {
	if c.hooks.BeforeHandler != nil {
		c.hooks.BeforeHandler(handler)
	}
}

// Foos is the Foo informer, for observers: read its cache (Indexer, Lister); it is
// running between Run's start and its return.
func (c *Controller) Foos() *informer.SharedIndexInformer[*v1alpha1.Foo] { return c.foos }

// Deployments is the Deployment informer, for observers, like Foos.
func (c *Controller) Deployments() *informer.SharedIndexInformer[*appsv1.Deployment] {
	return c.deployments
}

// Workers is the number of workers Run starts.
func (c *Controller) Workers() int { return c.workers }
