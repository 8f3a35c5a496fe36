package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
	"github.com/kubeinternals/informers/examples/foo-controller/fooclient"
	"github.com/kubeinternals/informers/examples/internal/events"
	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/leaderelection"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/trace"
	"github.com/kubeinternals/informers/workqueue"
)

// Name is the controller's name: its field manager and its Events' reportingController
// suffix.
const Name = "foo-controller"

// ErrAlreadyRun is returned by a second call to Run: a Controller's informers and queue
// are single-use; build a new Controller to start again.
var ErrAlreadyRun = errors.New("controller: Run already called")

// Key names one Foo: what the workqueue holds.
//
// client-go: tools/cache/object-names.go ObjectName
type Key struct {
	Namespace, Name string
}

// String is namespace/name, for logs.
func (k Key) String() string { return indexer.ObjectKey(k.Namespace, k.Name) }

// Options tunes New. The zero value is sample-controller's configuration.
type Options struct {
	// Workers is the number of goroutines running syncs. 0 means 2.
	Workers int
	// ResyncPeriod is both informers' resync period. 0 means 30s; negative disables
	// resync.
	ResyncPeriod time.Duration
	// RateLimiter paces retries. nil means sample-controller's: the slower of a
	// per-item exponential backoff (5ms doubling to 1000s) and an overall token
	// bucket (50 per second, burst 300).
	RateLimiter workqueue.RateLimiter[Key]
	// DrainTimeout bounds how long Run waits, after ctx ends, for the syncs in progress
	// to finish. 0 means 30s (the kubelet's default grace period).
	DrainTimeout time.Duration
	// Logger receives the controller's logs and the informers'. Nil means slog.Default().
	Logger *slog.Logger
	// Tracer, if set, traces the whole pipeline: both informers (reflector, queue,
	// indexer writes, handlers), the workqueue, the Deployment→Foo mapping in
	// handleDeployment and every sync. Its workqueue and Foo informer are both named
	// "foos", the Deployment informer "deployments", the handlers "enqueueFoo" and
	// "handleDeployment".
	Tracer *trace.Tracer
	// Hooks let an experiment fail syncs or slow handlers (see Hooks).
	Hooks Hooks
	// Pipeline chooses both informers' queue and initial list: "" (or
	// DefaultPipeline) is client-go 1.37's, ClassicPipeline the DeltaFIFO and paged
	// LIST most of the literature describes, for comparing the two.
	Pipeline Pipeline
	// InformerMetrics and QueueMetrics, if set, receive both informers' metrics
	// (reflectors and handlers included; informers named "foos" and "deployments")
	// and the workqueue's (named "foos").
	InformerMetrics informer.MetricsProvider
	QueueMetrics    workqueue.MetricsProvider
	// LeaderElection, if set, runs the workers only on the replica that holds a
	// Lease (see LeaderElection), and sends the controller's writes (Deployments,
	// Foo status, Events) through the elector's write gate. Nil: this replica always
	// works, as sample-controller does.
	LeaderElection *LeaderElection
	// ElectionMetrics, if set with LeaderElection, receives the election's metrics
	// (named by the Lease's namespace/name).
	ElectionMetrics leaderelection.MetricsProvider
}

// Controller keeps, for every Foo, a Deployment with the Foo's name and replica count,
// and copies the Deployment's availableReplicas into the Foo's status.
type Controller struct {
	log          *slog.Logger
	tracer       *trace.Tracer
	hooks        Hooks
	workers      int
	drainTimeout time.Duration

	factory     *informer.Factory
	foos        *informer.SharedIndexInformer[*v1alpha1.Foo]
	deployments *informer.SharedIndexInformer[*appsv1.Deployment]
	fooHandler  *informer.Registration[*v1alpha1.Foo]
	depHandler  *informer.Registration[*appsv1.Deployment]

	queue    *workqueue.RateLimitingQueue[Key]
	fooAPI   *fooclient.Client
	depAPI   rest.Interface
	recorder *events.Recorder

	mu  sync.Mutex // guards ran
	ran bool       // Run has been called; guarded by mu

	// elector is nil without leader election. Set by New, never changed.
	elector *leaderelection.Elector
	// working is true from the moment the caches have synced until Run begins to
	// shut down: what Ready reports.
	working atomic.Bool
	// leading is true while the workers run: what Leading reports.
	leading atomic.Bool
}

// New builds the controller: one informer factory with a Foo informer (a custom
// resource, served only as JSON) and a Deployment informer (protobuf), their event
// handlers, the rate-limited queue, and the REST clients for writes. It starts nothing:
// call Run.
func New(cfg *rest.Config, opts Options) (*Controller, error) {
	if cfg == nil {
		return nil, errors.New("controller: nil *rest.Config")
	}
	queue, initialList, err := opts.Pipeline.options()
	if err != nil {
		return nil, err
	}
	c := &Controller{log: opts.Logger, tracer: opts.Tracer, hooks: opts.Hooks, workers: opts.Workers, drainTimeout: opts.DrainTimeout}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.workers <= 0 {
		c.workers = 2
	}
	if c.drainTimeout <= 0 {
		c.drainTimeout = 30 * time.Second
	}
	resync := opts.ResyncPeriod
	switch {
	case resync == 0:
		resync = 30 * time.Second
	case resync < 0:
		resync = 0
	}
	limiter := opts.RateLimiter
	if limiter == nil {
		var err error
		if limiter, err = sampleControllerRateLimiter(); err != nil {
			return nil, err
		}
	}
	c.queue = workqueue.NewRateLimitingQueue(workqueue.RateLimitingOptions[Key]{
		Options:     workqueue.Options{Name: "foos", Logger: c.log, Tracer: c.tracer, MetricsProvider: opts.QueueMetrics},
		RateLimiter: limiter,
	})

	// One factory for both: it asks for protobuf for Deployments (a built-in type, whose
	// generated code decodes it) and for JSON for Foos (a custom resource is served
	// only as JSON).
	scheme, err := listwatch.NewScheme(v1alpha1.AddToScheme, appsv1.AddToScheme)
	if err != nil {
		return nil, err
	}
	c.factory = informer.NewFactory(cfg, informer.FactoryOptions{
		Scheme: scheme, ResyncPeriod: resync, Logger: c.log, Tracer: c.tracer,
		Queue: queue, InitialList: initialList, MetricsProvider: opts.InformerMetrics,
	})
	if c.foos, err = informer.For[*v1alpha1.Foo](c.factory, informer.Resource{GVR: v1alpha1.SchemeGroupVersion.WithResource("foos")}); err != nil {
		return nil, fmt.Errorf("controller: Foo informer: %w", err)
	}
	if c.deployments, err = informer.For[*appsv1.Deployment](c.factory, informer.Resource{GVR: appsv1.SchemeGroupVersion.WithResource("deployments")}); err != nil {
		return nil, fmt.Errorf("controller: Deployment informer: %w", err)
	}
	if c.fooHandler, err = c.foos.AddEventHandlerWithOptions(c.fooHandlers(), informer.HandlerOptions{Name: FooHandler}); err != nil {
		return nil, err
	}
	if c.depHandler, err = c.deployments.AddEventHandlerWithOptions(c.deploymentHandlers(), informer.HandlerOptions{Name: DeploymentHandler}); err != nil {
		return nil, err
	}

	// With leader election, every client that writes for the leader goes through
	// the elector's write gate: a replica that does not hold its term — a paused
	// leader that woke up, a leader whose work outlived a lost lease — sends no
	// write (leaderelection.Elector.WriteGate). The informers and the Lease's own
	// client use cfg as it is.
	writes := cfg
	if le := opts.LeaderElection; le != nil {
		if c.elector, err = c.newElector(cfg, *le, opts.ElectionMetrics, c.lead); err != nil {
			return nil, err
		}
		writes = c.elector.Gated(cfg)
	}
	if c.fooAPI, err = fooclient.NewClient(writes, fooclient.Options{}); err != nil {
		return nil, err
	}
	if c.depAPI, err = newDeploymentClient(writes); err != nil {
		return nil, err
	}
	evScheme, err := listwatch.NewScheme(corev1.AddToScheme, appsv1.AddToScheme, v1alpha1.AddToScheme)
	if err != nil {
		return nil, err
	}
	if c.recorder, err = events.NewRecorder(writes, events.Options{
		Scheme: evScheme, ReportingController: "kubeinternals.io/" + Name, Logger: c.log,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// sampleControllerRateLimiter is the retry pacing of sample-controller's NewController.
//
// client-go: util/workqueue/default_rate_limiters.go DefaultTypedControllerRateLimiter
// (same shape; sample-controller raises the bucket to 50 qps, burst 300)
func sampleControllerRateLimiter() (workqueue.RateLimiter[Key], error) {
	perItem, err := workqueue.NewItemExponentialFailureRateLimiter[Key](workqueue.ExponentialFailureOptions{
		BaseDelay: 5 * time.Millisecond, MaxDelay: 1000 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	overall, err := workqueue.NewBucketRateLimiter[Key](workqueue.BucketOptions{QPS: 50, Burst: 300})
	if err != nil {
		return nil, err
	}
	return workqueue.NewMaxOfRateLimiter[Key](perItem, overall)
}

// Run starts the informers, waits for both caches, runs the workers and blocks until
// ctx ends. While the Foo CRD is not installed (404) it keeps waiting and logs why every
// 5 s; an error waiting cannot fix (403: a missing RBAC permission) ends it at once.
// Then it stops taking work, lets each worker finish the key in hand (up to
// Options.DrainTimeout), and stops the informers. It returns nil after a clean stop.
//
// sample-controller: controller.go Controller.Run
func (c *Controller) Run(ctx context.Context) error {
	c.mu.Lock()
	ran := c.ran
	c.ran = true
	c.mu.Unlock()
	if ran {
		return ErrAlreadyRun
	}
	// Shutdown order on every path: the queue (workers exit), then the informers.
	defer c.factory.Shutdown()

	c.log.Info("starting informers")
	c.factory.Start(ctx)
	// Why wait for the handler registrations, not just the informers: a synced
	// informer may still be handing the initial list to our handlers; waiting for the
	// registrations means every existing Foo is in the queue before workers start.
	//
	// Why keep waiting on 404: started before its CRD (sample-controller's README
	// order), the Foo informer's watch-list (and LIST fallback) gets 404 until the CRD is installed; the
	// reflector keeps retrying, and the controller starts once it appears, saying
	// every few seconds why it waits. A 403 still ends Run at once: waiting cannot fix
	// a missing RBAC permission.
	if err := informer.WaitForCacheSyncWithOptions(ctx, informer.WaitOptions{
		KeepWaitingOn: apierrors.IsNotFound,
		Report: func(w informer.Waiting) {
			if apierrors.IsNotFound(w.Err) {
				c.log.Info("waiting for caches to sync: the API is not served — is the Foo CRD installed?", "for", w.Name, "waited", w.Since.Round(time.Second), "err", w.Err,
					"hint", "kubectl apply -f examples/foo-controller/artifacts/crd.yaml")
				return
			}
			c.log.Info("waiting for caches to sync", "for", w.Name, "waited", w.Since.Round(time.Second), "err", w.Err)
		},
	}, c.fooHandler, c.depHandler); err != nil {
		c.queue.ShutDown()
		return fmt.Errorf("controller: caches did not sync: %w", err)
	}

	c.working.Store(true)
	defer c.working.Store(false)
	if c.elector == nil {
		// Without leader election nothing ever demands a stop at once: the drain
		// is bounded by DrainTimeout alone.
		c.runWorkers(ctx, context.WithoutCancel(ctx))
		return nil
	}
	c.log.Info("caches synced; competing for the lease before starting workers")
	if err := c.elector.Run(ctx); err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	return nil
}

// lead is OnStartedLeading: the workers run until leading ends. After a graceful stop
// they finish the keys in hand while the elector keeps renewing; when the lease is
// lost — before or during that drain — they stop at once: another replica may be
// about to start.
func (c *Controller) lead(leadCtx context.Context) {
	c.runWorkers(leadCtx, leaderelection.LeaseContext(leadCtx))
}

// runWorkers runs the workers until ctx ends, then stops them. If must (the context
// that ends when the workers must stop at once: leaderelection.LeaseContext) is still
// live then, it drains the queue — each worker finishes its key, up to
// Options.DrainTimeout — and cuts the drain short the moment must ends; otherwise it
// cancels their requests at once. Every request a worker makes runs under must. It
// returns when every worker has.
func (c *Controller) runWorkers(ctx, must context.Context) {
	c.log.Info("starting workers", "count", c.workers)
	c.leading.Store(true)
	// Why must, not ctx: a worker that already took a key finishes it even though ctx
	// has ended — a half-done sync is what "let workers finish" avoids. The drain
	// timeout below bounds it, and must ends it when the lease is lost.
	workCtx, cancelWork := context.WithCancel(must)
	defer cancelWork()
	var wg sync.WaitGroup
	for range c.workers {
		// Goroutine owned by runWorkers: a worker; it exits when the queue is shut
		// down and empty, and runWorkers waits for it below.
		wg.Go(func() {
			for c.processNextWorkItem(workCtx) {
			}
		})
	}

	<-ctx.Done()
	c.leading.Store(false)
	if must.Err() == nil {
		c.working.Store(false)
		c.log.Info("shutting down: no new work, letting workers finish")
		drainCtx, cancelDrain := context.WithTimeout(must, c.drainTimeout)
		defer cancelDrain()
		err := c.queue.ShutDownWithDrain(drainCtx)
		switch {
		case must.Err() != nil:
			c.log.Warn("leadership lost while draining: stopping workers at once", "why", context.Cause(must))
		case err != nil:
			c.log.Warn("workers did not finish in time; cancelling their requests", "timeout", c.drainTimeout, "err", err)
		}
	} else {
		// Why cancel first: a request in flight must not land after another replica
		// may have started; the keys still queued then fail at once and are dropped.
		c.log.Warn("leadership lost: stopping workers at once")
		cancelWork()
		c.queue.ShutDown()
	}
	cancelWork()
	wg.Wait()
	c.log.Info("workers stopped")
}

// Ready reports whether the controller can do its job: its caches have synced and it
// is not shutting down. With leader election a standby replica is ready too — it takes
// over with a warm cache; Leading says which replica works. foo-controller serves it as /readyz,
// as controller-runtime's managers do.
func (c *Controller) Ready() bool { return c.working.Load() }

// processNextWorkItem takes one key, syncs it and settles it with the queue. It returns
// false when the queue has shut down.
//
// sample-controller: controller.go Controller.processNextWorkItem
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	// Invariant: Done for every key Get returned, or the key is stuck "processing"
	// and never handed out again.
	defer c.queue.Done(key)
	start := time.Now()
	err := c.syncHooked(ctx, key)
	if c.tracer != nil {
		c.tracer.Reconciled("foos", key.String(), time.Since(start), err)
	}
	settle(c.queue, key, err)
	switch {
	case err == nil:
	case errors.Is(err, leaderelection.ErrWriteGateClosed):
		// This replica's term is over (the lease was lost, or may be): the write was
		// not sent, or was abandoned before its answer. The new leader syncs the key.
		c.log.Warn("sync's write refused by the write gate: this replica no longer leads", "foo", key.String(), "err", err)
	case apierrors.IsConflict(err):
		// 409 Conflict: the Foo was written from a lister copy one write behind the
		// server's (our own last status update, or someone's spec change, not yet seen
		// through the watch). That is optimistic concurrency doing its job, not a fault:
		// the retry reads the newer copy. sample-controller logs it as an error like any
		// other; we say what it is so a reader of the log is not sent looking for a bug.
		c.log.Info("sync conflicted with a newer write; retrying with the newer copy", "foo", key.String(), "err", err, "requeues", c.queue.NumRequeues(key))
	default:
		c.log.Error("sync failed", "foo", key.String(), "err", err, "requeues", c.queue.NumRequeues(key))
	}
	return true
}

// settle tells the queue how a sync of key ended: success and permanent errors forget
// the key (reset its backoff, no retry); any other error re-adds it with backoff.
func settle(q workqueue.RateLimitingInterface[Key], key Key, err error) {
	if err == nil || errors.Is(err, ErrInvalidSpec) {
		q.Forget(key)
		return
	}
	q.AddRateLimited(key)
}
