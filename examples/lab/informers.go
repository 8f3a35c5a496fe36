package main

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/trace"
)

// observed is an informer a scenario watches, with the trace of everything it did.
type observed[T indexer.Object] struct {
	*informer.SharedIndexInformer[T]
	factory *informer.Factory
	tracer  *trace.Tracer
	rec     *trace.Recorder
}

// newObserved builds a traced factory on cfg (lab.Watched unless the scenario needs
// otherwise) and its informer for res, not started yet: the caller adds handlers,
// then starts it (start, or factory.Start). The caller defers stop.
func newObserved[T indexer.Object](lab *Lab, cfg *rest.Config, res informer.Resource, opts informer.FactoryOptions) (*observed[T], error) {
	return newObservedWith[T](lab, cfg, res, opts)
}

// newObservedWith is newObserved whose tracer also reports to sinks, each called on
// the reporting stage's goroutine: a scenario that must act at an exact step of the
// pipeline (a fault between a 410 and the relist, say) acts from there.
func newObservedWith[T indexer.Object](lab *Lab, cfg *rest.Config, res informer.Resource, opts informer.FactoryOptions, sinks ...trace.Sink) (*observed[T], error) {
	rec := &trace.Recorder{}
	tracer := lab.tracer(append([]trace.Sink{rec.Record}, sinks...)...)
	f, err := lab.factoryOn(cfg, tracer, opts)
	if err != nil {
		return nil, err
	}
	inf, err := informer.For[T](f, res)
	if err != nil {
		f.Shutdown()
		return nil, err
	}
	return &observed[T]{SharedIndexInformer: inf, factory: f, tracer: tracer, rec: rec}, nil
}

// start starts the factory and waits for the informer's cache.
func (o *observed[T]) start(ctx context.Context) error {
	o.factory.Start(ctx)
	return informer.WaitForCacheSync(ctx, o.SharedIndexInformer)
}

// stop shuts the factory down and waits for its informers.
func (o *observed[T]) stop() { o.factory.Shutdown() }

// startObserved is newObserved, then register (to add handlers before the informer
// starts), then start. The caller defers stop.
func startObserved[T indexer.Object](ctx context.Context, lab *Lab, cfg *rest.Config, res informer.Resource,
	opts informer.FactoryOptions, register func(*informer.SharedIndexInformer[T]) error) (*observed[T], error) {
	o, err := newObserved[T](lab, cfg, res, opts)
	if err != nil {
		return nil, err
	}
	if register != nil {
		if err := register(o.SharedIndexInformer); err != nil {
			o.stop()
			return nil, err
		}
	}
	if err := o.start(ctx); err != nil {
		o.stop()
		return nil, err
	}
	return o, nil
}

// createAndAwait creates obj in resource of ns and waits until the informer has
// cached it.
func createAndAwait[T indexer.Object](ctx context.Context, c rest.Interface, o *observed[T], resource string, obj T) error {
	if err := create(ctx, c, obj.GetNamespace(), resource, obj); err != nil {
		return err
	}
	key := obj.GetNamespace() + "/" + obj.GetName()
	return await(ctx, awaitLong, "the informer to cache "+key, cached(o.SharedIndexInformer, key))
}

// since returns the events recorded after the first mark ones.
func (o *observed[T]) since(mark int) []trace.Event { return o.rec.Events()[mark:] }

// mark is how many events have been recorded so far (for since).
func (o *observed[T]) mark() int { return len(o.rec.Events()) }
