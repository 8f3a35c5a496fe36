package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/workqueue"
)

const (
	// SyncKey is the only item the queue ever holds.
	SyncKey = "sync"
	// DefaultAnnotation is the opt-in annotation: a namespace with it set to "true"
	// receives the copies.
	DefaultAnnotation = "secret-sync.kubeinternals.io/enabled"
	// LabelSourceNamespace marks a copy and names the namespace it was copied from.
	LabelSourceNamespace = "secret-sync.kubeinternals.io/source-namespace"
	// FieldManager names this controller's writes.
	FieldManager = "secret-sync"
)

// ErrInvalidOptions is returned (wrapped) by New for unusable options.
var ErrInvalidOptions = errors.New("secret-sync: invalid options")

// ErrAlreadyRun is returned by a second call to Run; build a new Controller instead.
var ErrAlreadyRun = errors.New("secret-sync: Run already called")

// Options configures New. SourceNamespace is required.
type Options struct {
	// SourceNamespace holds the Secrets to copy.
	SourceNamespace string
	// Annotation is the opt-in annotation key ("true" opts in). "" means
	// DefaultAnnotation.
	Annotation string
	// ResyncPeriod is the informers' resync period; 0 disables resync.
	ResyncPeriod time.Duration
	// Logger receives the controller's and the informers' logs. Nil means slog.Default().
	Logger *slog.Logger
}

// Stats counts what the controller has done since New. Syncs counts full syncs.
// Creates counts the copies created: POSTs that succeeded, one per "created copy" log
// line. A POST that finds the copy already there is not a create; the PUT that follows
// it is counted in Updates. Updates and Deletes count the PUT and DELETE requests the
// syncs sent: a PUT that changed nothing on the server, a failed request, and a
// DELETE of a copy already gone all count.
type Stats struct {
	Syncs, Creates, Updates, Deletes int64
}

// Controller is secret-sync. Build it with New, run it with Run.
type Controller struct {
	log        *slog.Logger
	source     string
	annotation string

	factory    *informer.Factory
	sources    *informer.SharedIndexInformer[*corev1.Secret]
	copies     *informer.SharedIndexInformer[*corev1.Secret]
	namespaces *informer.SharedIndexInformer[*corev1.Namespace]
	handlers   []informer.Syncer

	queue *workqueue.RateLimitingQueue[string]
	core  rest.Interface

	// Counters, written by the worker and read by Stats from any goroutine.
	syncs, creates, updates, deletes atomic.Int64

	mu  sync.Mutex // guards ran
	ran bool       // guarded by mu
}

// New builds the controller: a factory with three informers, the handlers that enqueue
// SyncKey, the queue, and a core/v1 REST client for the writes. It starts nothing.
func New(cfg *rest.Config, opts Options) (*Controller, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%w: nil *rest.Config", ErrInvalidOptions)
	}
	if opts.SourceNamespace == "" {
		return nil, fmt.Errorf("%w: SourceNamespace is required", ErrInvalidOptions)
	}
	c := &Controller{log: opts.Logger, source: opts.SourceNamespace, annotation: opts.Annotation}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.annotation == "" {
		c.annotation = DefaultAnnotation
	}
	c.queue = workqueue.NewRateLimitingQueue(workqueue.RateLimitingOptions[string]{Options: workqueue.Options{Name: "secret-sync", Logger: c.log}})

	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	if err != nil {
		return nil, err
	}
	c.factory = informer.NewFactory(cfg, informer.FactoryOptions{Scheme: scheme, ResyncPeriod: opts.ResyncPeriod, Logger: c.log})
	secrets := corev1.SchemeGroupVersion.WithResource("secrets")
	if c.sources, err = informer.For[*corev1.Secret](c.factory, informer.Resource{GVR: secrets, Namespace: c.source}); err != nil {
		return nil, err
	}
	// Why watch the copies too: a copy deleted or edited by hand is repaired at once.
	// Why by label: only our copies, not every Secret of the cluster.
	if c.copies, err = informer.For[*corev1.Secret](c.factory, informer.Resource{GVR: secrets, LabelSelector: LabelSourceNamespace + "=" + c.source}); err != nil {
		return nil, err
	}
	if c.namespaces, err = informer.For[*corev1.Namespace](c.factory, informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("namespaces")}); err != nil {
		return nil, err
	}
	for _, add := range []func() (informer.Syncer, error){
		func() (informer.Syncer, error) { return c.sources.AddEventHandler(enqueueAll[*corev1.Secret](c.queue)) },
		func() (informer.Syncer, error) { return c.copies.AddEventHandler(enqueueAll[*corev1.Secret](c.queue)) },
		func() (informer.Syncer, error) {
			return c.namespaces.AddEventHandler(enqueueAll[*corev1.Namespace](c.queue))
		},
	} {
		reg, err := add()
		if err != nil {
			return nil, err
		}
		c.handlers = append(c.handlers, reg)
	}
	if c.core, _, err = kube.NewRESTClient(cfg, corev1.SchemeGroupVersion, nil, corev1.AddToScheme); err != nil {
		return nil, err
	}
	return c, nil
}

// enqueueAll is the whole event handling of a one-shot controller: whatever happened,
// to whichever object, queue the one key.
//
// Why resyncs are not filtered: a resync is a cheap, periodic "check everything",
// which is exactly what one sync does; the queue folds them all into one.
func enqueueAll[T indexer.Object](q workqueue.Interface[string]) informer.HandlerFuncs[T] {
	add := func() { q.Add(SyncKey) }
	return informer.HandlerFuncs[T]{
		AddFunc:    func(T, bool) { add() },
		UpdateFunc: func(T, T) { add() },
		DeleteFunc: func(informer.DeletedObject[T]) { add() },
	}
}

// Stats returns the counters.
func (c *Controller) Stats() Stats {
	return Stats{Syncs: c.syncs.Load(), Creates: c.creates.Load(), Updates: c.updates.Load(), Deletes: c.deletes.Load()}
}

// Run starts the informers, waits for their caches, and runs one worker until ctx
// ends. Then it stops taking work, lets the sync in progress finish (its requests use a
// context that is not cancelled, each bounded by the REST client's own timeouts), and
// stops the informers.
func (c *Controller) Run(ctx context.Context) error {
	c.mu.Lock()
	ran := c.ran
	c.ran = true
	c.mu.Unlock()
	if ran {
		return ErrAlreadyRun
	}
	defer c.factory.Shutdown()
	c.factory.Start(ctx)
	if err := informer.WaitForCacheSync(ctx, c.handlers...); err != nil {
		c.queue.ShutDown()
		return fmt.Errorf("secret-sync: caches did not sync: %w", err)
	}
	c.log.Info("caches synced; syncing", "source", c.source, "annotation", c.annotation)

	done := make(chan struct{})
	// Goroutine owned by Run: the single worker. It exits when the queue shuts down,
	// and Run waits for it.
	go func() {
		defer close(done)
		work := context.WithoutCancel(ctx)
		for {
			key, shutdown := c.queue.Get()
			if shutdown {
				return
			}
			if err := c.sync(work); err != nil {
				c.log.Error("sync failed; retrying with backoff", "err", err, "requeues", c.queue.NumRequeues(key))
				c.queue.AddRateLimited(key)
			} else {
				c.queue.Forget(key)
			}
			c.queue.Done(key)
		}
	}()

	<-ctx.Done()
	c.log.Info("shutting down: no new work, letting the sync in progress finish")
	c.queue.ShutDown()
	<-done
	return nil
}
