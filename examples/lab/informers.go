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
	rec  *trace.Recorder
	stop func() // shuts the factory down and waits for it
}

// startObserved builds a traced informer for res on cfg (lab.Watched unless the
// scenario needs otherwise), lets register add handlers before it starts, starts it
// and waits for its cache. The caller defers stop.
func startObserved[T indexer.Object](ctx context.Context, lab *Lab, cfg *rest.Config, res informer.Resource,
	opts informer.FactoryOptions, register func(*informer.SharedIndexInformer[T]) error) (*observed[T], error) {
	tracer, rec := newRecorder()
	f, err := lab.factoryOn(cfg, tracer, opts)
	if err != nil {
		return nil, err
	}
	inf, err := informer.For[T](f, res)
	if err != nil {
		return nil, err
	}
	if register != nil {
		if err := register(inf); err != nil {
			return nil, err
		}
	}
	f.Start(ctx)
	o := &observed[T]{SharedIndexInformer: inf, rec: rec, stop: f.Shutdown}
	if err := informer.WaitForCacheSync(ctx, inf); err != nil {
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
