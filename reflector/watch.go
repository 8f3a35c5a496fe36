package reflector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeinternals/informers/internal/objects"
	"github.com/kubeinternals/informers/internal/pause"
	"github.com/kubeinternals/informers/trace"
)

// initialEventsWarnInterval is both how often handleWatch checks a watch-list stream
// whose end bookmark has not arrived, and how long that stream must have been silent
// for warnMissingInitialEventsEnd to warn: it warns at a tick when no event has
// arrived yet, or when the last one is at least this old. A stream still delivering
// initial events is not warned about.
//
// client-go: tools/cache/reflector.go newInitialEventsEndBookmarkTicker
const initialEventsWarnInterval = 10 * time.Second

// eventSink receives watch events: the Store, or the watch-list buffer.
type eventSink[T any] interface {
	Add(obj T) error
	Update(obj T) error
	Delete(obj T) error
}

// watchWithResync runs the watch loop with the resync timer beside it.
//
// client-go: tools/cache/reflector.go Reflector.watchWithResync
func (r *Reflector[T]) watchWithResync(ctx context.Context, w Watch[T]) error {
	resyncErr := make(chan error, 1)
	if r.opts.ResyncPeriod > 0 {
		resyncCtx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		// Goroutine owned by this call: the resync timer. It exits when resyncCtx
		// is cancelled, which the deferred func does before waiting for it, so it
		// never outlives the watch.
		wg.Go(func() { r.resyncLoop(resyncCtx, resyncErr) })
		defer func() {
			cancel()
			wg.Wait()
		}()
	}
	return r.watch(ctx, w, resyncErr)
}

// watch re-watches from the last synced resource version for as long as that is
// safe, and returns the error that makes a relist necessary (nil when ctx ends).
// w, if not nil, is the stream watch-list left open.
//
// client-go: tools/cache/reflector.go Reflector.watch
func (r *Reflector[T]) watch(ctx context.Context, w Watch[T], resyncErr <-chan error) error {
	for {
		if ctx.Err() != nil {
			if w != nil {
				w.Stop()
			}
			return nil
		}
		start := time.Now()
		// Why: a watch from RV "" or "0" begins with synthetic ADDED events in no
		// particular RV order; the RV may only advance once they are over.
		propagateFromStart := true
		if w == nil {
			// Transition W1: open a watch at the last synced RV.
			opts := metav1.ListOptions{
				ResourceVersion: r.LastSyncResourceVersion(),
				// Why: the server ends the watch after this; a random value spreads
				// the re-watches of many clients.
				TimeoutSeconds: r.watchTimeoutSeconds(),
				// Why: bookmarks keep our RV fresh on quiet resources, so a re-watch
				// after a disconnect is less likely to hit 410.
				AllowWatchBookmarks: true,
			}
			propagateFromStart = opts.ResourceVersion != "" && opts.ResourceVersion != "0"
			if r.opts.Tracer != nil {
				r.emit(trace.Event{Kind: trace.WatchStarted, ResourceVersion: opts.ResourceVersion})
			}
			var err error
			w, err = r.lw.Watch(ctx, opts)
			if err != nil {
				if isWatchErrorRetriable(err) {
					// Transition W2: watch refused (connection refused, 429) → back off
					// → re-watch at the same RV, no relist.
					r.logger.Debug("watch failed; backing off", "err", err)
					delay := r.backoff.Next(time.Now())
					if r.opts.Tracer != nil {
						r.emit(trace.Event{Kind: trace.Backoff, Duration: delay, Reason: traceWhy(err)})
					}
					if !pause.For(ctx, delay) {
						return nil
					}
					continue
				}
				// Transition W3: watch refused otherwise → relist.
				return fmt.Errorf("watch %s: %w", r.typeDescription, err)
			}
			// A refused request opened no watch: only an open stream is counted.
			r.streamOpened(start)
		}
		_, err := r.handleWatch(ctx, w, r.store, start, false, func(rv string, pastSyntheticAdds bool) {
			if propagateFromStart || pastSyntheticAdds {
				r.setLastSyncResourceVersion(rv)
			}
		}, resyncErr)
		w.Stop()
		w = nil
		r.streamEnded(err)
		if r.opts.Tracer != nil {
			r.emit(trace.Event{Kind: trace.WatchEnded, Reason: traceWhy(err), ResourceVersion: r.LastSyncResourceVersion()})
		}
		switch {
		case err == nil:
			// Transition W6: the stream ended without an error — the server's timeout,
			// or a connection a proxy or load balancer closed or reset, which the REST
			// ListerWatcher (listwatch's streamWatch.receive) also reports as a plain
			// end → re-watch at once from the last RV, no relist.
			continue
		case errors.Is(err, errStopRequested):
			return nil
		case apierrors.IsTooManyRequests(err):
			// Transition W9: watch ended with 429 → back off → re-watch.
			r.logger.Debug("watch ended with 429; backing off")
			delay := r.backoff.Next(time.Now())
			if r.opts.Tracer != nil {
				r.emit(trace.Event{Kind: trace.Backoff, Duration: delay, Reason: traceWhy(err)})
			}
			if !pause.For(ctx, delay) {
				return nil
			}
			continue
		default:
			// Transitions W7, W8, W10: very short watch, 410 Expired, resync failure or any other
			// error → relist. Pitfall: after 410 we do NOT mark the RV unavailable:
			// a LIST at that RV means "at least this new" and the watch cache can
			// still serve it; only if that LIST also fails do we read from etcd.
			//
			// Simplified: client-go can re-watch after 500 InternalError for
			// MaxInternalErrorRetryDuration, which defaults to 0 (off); we always relist.
			return fmt.Errorf("watch of %s ended: %w", r.typeDescription, err)
		}
	}
}

// handleWatch applies the events of w to sink until the stream ends, an Error
// event or a resync failure arrives, or ctx is cancelled (errStopRequested). With
// exitOnInitialEventsEnd it returns as soon as the watch-list end bookmark arrives,
// leaving w open. onRV is told the resource version after every event, and whether
// an event other than ADDED has been seen. The caller stops w.
//
// client-go: tools/cache/reflector.go handleAnyWatch
func (r *Reflector[T]) handleWatch(ctx context.Context, w Watch[T], sink eventSink[T], start time.Time, exitOnInitialEventsEnd bool, onRV func(rv string, pastSyntheticAdds bool), resyncErr <-chan error) (initialEventsEnd bool, err error) {
	var ticks <-chan time.Time
	if exitOnInitialEventsEnd {
		ticker := time.NewTicker(initialEventsWarnInterval)
		defer ticker.Stop()
		ticks = ticker.C
	}
	pastSyntheticAdds := false
	count := 0
	// lastEvent is when the events so far had been handled: the warning's tick reads
	// it, and it is the watch's activity (WatchActivity.LastEvent). stamped is the
	// count it was stamped at.
	var lastEvent time.Time
	stamped := 0
	stamp := func() {
		lastEvent, stamped = time.Now(), count
		r.activity.delivered(lastEvent)
	}
	// Why on every return: the last events before the stream ended, or before the end
	// bookmark handed the stream on, were delivered too.
	defer func() {
		if count != stamped {
			stamp()
		}
	}()
	results := w.ResultChan()
	for {
		var ev Event[T]
		var ok bool
		// Fast path, while events are waiting: three non-blocking receives, in
		// priority order. For a live ctx and no resync error the first two take no
		// lock, the third locks one channel; a select over the four channels locks
		// all of them. Measured on a 10,000-object watch-list in process with a fast
		// producer, the select per event was a fifth of the informer's sync. When the
		// producer is the slower side (decoding from an apiserver, mostly), most
		// events still arrive through the slow path's select below.
		select {
		case <-ctx.Done():
			return initialEventsEnd, errStopRequested
		default:
		}
		select {
		case err := <-resyncErr:
			return initialEventsEnd, err
		default:
		}
		select {
		case ev, ok = <-results:
		default:
			// Slow path: nothing is waiting, so the stream is quiet. This is the
			// moment to stamp lastEvent, once, rather than reading the clock for every
			// event: a tick is only taken here, right after the stamp, so the warning
			// sees the same "since the last event" a per-event stamp gives, and so
			// does a stuck-watch check, give or take the handling of the last burst.
			if count != stamped {
				stamp()
			}
			select {
			case <-ctx.Done():
				return initialEventsEnd, errStopRequested
			case err := <-resyncErr:
				return initialEventsEnd, err
			case now := <-ticks:
				r.warnMissingInitialEventsEnd(now, start, lastEvent)
				continue
			case ev, ok = <-results:
			}
		}
		if !ok {
			// The stream ended: the server's timeout, or a connection closed or
			// reset on the way (W6; S4 during a watch-list) — unless it lasted
			// under a second and delivered nothing, not even a bookmark (W7).
			if count == 0 && time.Since(start) < time.Second {
				return initialEventsEnd, fmt.Errorf("%s: %w", r.name, ErrVeryShortWatch)
			}
			return initialEventsEnd, nil
		}
		if ev.Type == watch.Error {
			// Transitions W8–W10 start here: an Error event → its status as an error.
			return initialEventsEnd, statusError(ev.Status)
		}
		if objects.IsNil(ev.Object) {
			r.logger.Warn("skipping watch event without an object", "eventType", string(ev.Type))
			continue
		}
		// Invariant: everything the reflector needs from the object is read
		// before the store is called. From then on the store owns it: a
		// transform may change it in place (clearing its resourceVersion, say),
		// and handlers on other goroutines may already be reading it.
		//
		// client-go: tools/cache/reflector.go handleAnyWatch (reads the RV first)
		meta := eventMeta{
			namespace:       ev.Object.GetNamespace(),
			name:            ev.Object.GetName(),
			resourceVersion: ev.Object.GetResourceVersion(),
		}
		switch ev.Type {
		case watch.Modified, watch.Deleted:
			pastSyntheticAdds = true
		case watch.Bookmark:
			pastSyntheticAdds = true
			if ev.Object.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
				initialEventsEnd = true
			}
		}
		// Transitions W4, W5: apply the event to the store (or the watch-list buffer).
		if r.opts.Tracer != nil {
			r.traceEvent(ev.Type, meta)
		}
		r.metrics.event(string(ev.Type), ev.Type == watch.Bookmark)
		r.applyEvent(ev, meta, sink)
		onRV(meta.resourceVersion, pastSyntheticAdds)
		count++
		if count-stamped >= stampEvery {
			stamp() // a burst that never lets the stream go quiet
		}
		if exitOnInitialEventsEnd && initialEventsEnd {
			r.logger.Debug("initial events received", "events", count, "took", time.Since(start))
			return true, nil
		}
	}
}

// eventMeta is what the reflector reads from a watch event's object before the
// store takes it.
type eventMeta struct {
	namespace, name, resourceVersion string
}

// applyEvent hands one event to sink. Store errors are logged, not returned: the
// event is gone either way, and the next relist repairs the store. meta was read
// from ev.Object before this call; the object itself is not read after sink has it.
func (r *Reflector[T]) applyEvent(ev Event[T], meta eventMeta, sink eventSink[T]) {
	var err error
	switch ev.Type {
	case watch.Added:
		err = sink.Add(ev.Object)
	case watch.Modified:
		err = sink.Update(ev.Object)
	case watch.Deleted:
		err = sink.Delete(ev.Object)
	case watch.Bookmark:
		// Transition W5: Bookmark → the RV advances; the store's objects do not change.
		if bs, ok := sink.(BookmarkStore); ok {
			err = bs.Bookmark(meta.resourceVersion)
		}
	default:
		r.logger.Warn("skipping watch event of unknown type", "eventType", string(ev.Type))
		return
	}
	if err != nil {
		r.logger.Error("store rejected a watch event", "eventType", string(ev.Type), "key", objects.Key(meta.namespace, meta.name), "err", err)
	}
}

// warnMissingInitialEventsEnd is called at each tick of handleWatch's ticker while a
// watch-list awaits its end bookmark. It warns when the stream has stalled: no event
// yet since start, or none for at least initialEventsWarnInterval since lastEvent.
//
// client-go: tools/cache/reflector.go initialEventsEndBookmarkTicker.produceWarningIfExpired
func (r *Reflector[T]) warnMissingInitialEventsEnd(now, start, lastEvent time.Time) {
	switch {
	case lastEvent.IsZero():
		r.logger.Warn("awaiting the bookmark that ends the initial events; no events received yet", "waited", now.Sub(start))
	case now.Sub(lastEvent) >= initialEventsWarnInterval:
		r.logger.Warn("awaiting the bookmark that ends the initial events", "sinceLastEvent", now.Sub(lastEvent))
	}
}
