package informer

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kubeinternals/informers/deltafifo"
	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/reflector"
)

// Run starts the reflector, the processing loop and the handlers' goroutines, and
// blocks until ctx ends. When it returns, every goroutine it started has exited.
// A second call logs a warning and returns at once.
//
// Order of shutdown: the reflector and the processing loop stop first; only then are
// the handlers' listeners stopped, so no notification is distributed to a stopped
// listener.
//
// client-go: tools/cache/shared_informer.go sharedIndexInformer.RunWithContext
func (s *SharedIndexInformer[T]) Run(ctx context.Context) {
	queue, refl, err := s.start()
	if err != nil {
		s.logger.Error("informer not run", "err", err)
		if !errors.Is(err, errRunTwice) {
			// Bad options (an unknown Queue or InitialList, a nil ListerWatcher):
			// WaitForCacheSync returns this error at once instead of waiting.
			s.errs.record(err)
		}
		return
	}

	processorDone := make(chan struct{})
	var wg, reflectorWG sync.WaitGroup
	wg.Add(2)
	reflectorWG.Add(1)
	// Owner: Run. Exits after processorDone is closed, once the listeners stopped.
	go func() { defer wg.Done(); s.processor.run(processorDone) }()
	// Owner: Run. Exits when the queue has synced or ctx ends.
	go func() {
		defer wg.Done()
		select {
		case <-queue.Synced():
			close(s.synced)
			s.processor.markUpstreamSynced()
		case <-ctx.Done():
		}
	}()
	// Owner: Run. Exits when ctx ends (Reflector.Run returns with no goroutine left).
	go func() { defer reflectorWG.Done(); refl.Run(ctx) }()
	if s.mutations != nil {
		wg.Add(1)
		// Owner: Run. The mutation detector's comparisons; exits when ctx ends.
		go func() { defer wg.Done(); s.mutations.run(ctx) }()
	}

	s.processLoop(ctx, queue)
	reflectorWG.Wait()

	s.mu.Lock()
	s.stopped = true // no new handlers from here on
	s.mu.Unlock()
	close(processorDone)
	wg.Wait()
}

// errRunTwice is start's error for a second Run.
var errRunTwice = errors.New("Run called more than once")

// start builds the queue and the reflector exactly once.
func (s *SharedIndexInformer[T]) start() (deltafifo.Queue[T], *reflector.Reflector[T], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return nil, nil, errRunTwice
	}
	var queue deltafifo.Queue[T]
	switch s.opts.Queue {
	case RealFIFOQueue:
		// client-go: tools/cache/controller.go newQueueFIFO (EmitDeltaTypeBookmark: true)
		queue = deltafifo.NewRealFIFO(deltafifo.RealFIFOOptions[T]{
			Transform: s.transform, EmitBookmark: true, Logger: s.logger, Name: s.opts.Name,
			Tracer: s.opts.Tracer, QueuedItems: s.metrics.queuedItems(),
		})
	case DeltaFIFOQueue:
		queue = deltafifo.NewDeltaFIFO(deltafifo.DeltaFIFOOptions[T]{
			KnownObjects: s.indexer, Transform: s.transform, Logger: s.logger, Name: s.opts.Name,
			Tracer: s.opts.Tracer, QueuedItems: s.metrics.queuedItems(),
		})
	default:
		return nil, nil, fmt.Errorf("%w: unknown Queue %v", reflector.ErrInvalidOptions, s.opts.Queue)
	}
	handler := s.watchErrorHandler
	refl, err := reflector.NewReflector(s.lw, &listTracker[T]{Queue: queue, errs: &s.errs}, reflector.Options[T]{
		Name:            s.opts.Name,
		MetricsName:     s.opts.MetricsName,
		ResyncPeriod:    s.resyncCheckPeriod,
		ShouldResync:    s.processor.shouldResync,
		Logger:          s.logger,
		InitialList:     s.opts.InitialList,
		PageSize:        s.opts.PageSize,
		Tracer:          s.opts.Tracer,
		CheckWatchList:  s.opts.CheckWatchList,
		OnInconsistency: s.opts.OnInconsistency,
		MetricsProvider: s.opts.MetricsProvider,
		WatchErrorHandler: func(ctx context.Context, r *reflector.Reflector[T], err error) {
			s.errs.record(err)
			if handler != nil {
				handler(ctx, err)
			} else {
				reflector.DefaultWatchErrorHandler(ctx, r, err)
			}
		},
	})
	if err != nil {
		return nil, nil, err
	}
	s.started, s.refl = true, refl
	return queue, refl, nil
}

// listTracker is the store the reflector writes to: the queue, plus a note that a
// list succeeded, which clears the error WaitForCacheSync would report. (The queue
// itself records its length for the queued-items metric, under its own lock.)
type listTracker[T indexer.Object] struct {
	deltafifo.Queue[T]
	errs *syncErrors
}

// Replace passes the list on and records the success.
func (l *listTracker[T]) Replace(items []T, resourceVersion string) error {
	err := l.Queue.Replace(items, resourceVersion)
	if err == nil {
		l.errs.clear()
	}
	return err
}

// processLoop pops from the queue until ctx ends, applying each item's deltas to the
// cache and distributing them. A processing error is logged and the item dropped,
// as in client-go: the next relist repairs the cache.
//
// client-go: tools/cache/controller.go controller.processLoop
func (s *SharedIndexInformer[T]) processLoop(ctx context.Context, queue deltafifo.Queue[T]) {
	stop := context.AfterFunc(ctx, queue.Close)
	defer stop()
	batchQueue, batched := queue.(deltafifo.BatchQueue[T])
	for {
		var err error
		if batched {
			err = batchQueue.PopBatch(ctx, s.handleBatch)
		} else {
			err = queue.Pop(ctx, s.handleDeltas)
		}
		switch {
		case err == nil:
		case errors.Is(err, deltafifo.ErrClosed) || ctx.Err() != nil:
			return
		default:
			s.logger.Error("processing deltas failed; dropping them until the next relist", "err", err)
		}
	}
}
