package reflector

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/internal/pause"
	"github.com/kubeinternals/informers/trace"
)

// rewatchResourceVersion chooses the RV of a watch-list: the last synced RV ("" at
// first), or "" after it proved unavailable. With resourceVersionMatch=NotOlderThan,
// "" means "the newest state, read consistently".
//
// client-go: tools/cache/reflector.go Reflector.rewatchResourceVersion
func (r *Reflector[T]) rewatchResourceVersion() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.rvUnavailable {
		return ""
	}
	return r.lastSyncRV
}

// WatchListCutsBeforeList is how many watch-list streams in a row may close before
// their end bookmark, within one cycle, before that cycle gives up on the watch-list
// and fetches the state with a paged LIST instead (transition S7). The next cycle
// tries a watch-list again.
//
// Why: behind a proxy or load balancer that cuts every stream after a fixed time, a
// watch-list whose initial events take longer never completes. client-go starts it
// over at once, forever: the informer never syncs, and every attempt makes the
// apiserver stream the whole state again. Short paged LIST requests get through such
// a proxy.
const WatchListCutsBeforeList = 3

// ErrWatchListCut is wrapped by the error with which a cycle gives up its watch-list
// after WatchListCutsBeforeList cut streams (transition S7); the cycle lists instead.
var ErrWatchListCut = errors.New("watch-list streams closed before their initial events ended")

// watchList fetches the full state as a stream: the server sends one ADDED per
// object, then a bookmark annotated k8s.io/initial-events-end at the RV of that
// state. We buffer the events, Replace the store with them at the bookmark's RV,
// and return the still-open watch for the watch loop to continue. A nil watch with
// a nil error means ctx was cancelled; an error means "fall back to LIST".
//
// client-go: tools/cache/reflector.go Reflector.watchList
func (r *Reflector[T]) watchList(ctx context.Context) (Watch[T], error) {
	cuts := 0 // streams in a row that closed before their end bookmark (S4)
	for {
		if ctx.Err() != nil {
			return nil, nil
		}
		// Transition S1: ask for the state as a stream of ADDED events.
		buffer := newInitialEvents[T]()
		sendInitialEvents := true
		opts := metav1.ListOptions{
			ResourceVersion:      r.rewatchResourceVersion(),
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			SendInitialEvents:    &sendInitialEvents,
			AllowWatchBookmarks:  true,
			TimeoutSeconds:       r.watchTimeoutSeconds(),
		}
		start := time.Now()
		r.metrics.listStarted()
		if r.opts.Tracer != nil {
			r.emit(trace.Event{Kind: trace.ListStarted, Type: "watch-list", ResourceVersion: opts.ResourceVersion})
		}
		w, err := r.lw.Watch(ctx, opts)
		if err != nil {
			if r.retryWatchList(ctx, err) {
				continue
			}
			return nil, err
		}
		// Invariant: every stream counted here is ended in the metrics once — below
		// when it ends before the end bookmark or the Replace fails, else by the
		// watch loop that carries it on.
		r.streamOpened(start)
		r.fetchAnswered()
		var bookmarkRV string
		ended, err := r.handleWatch(ctx, w, buffer, start, true, func(rv string, pastSyntheticAdds bool) {
			if pastSyntheticAdds {
				bookmarkRV = rv
			}
		}, nil)
		if err != nil {
			w.Stop()
			r.streamEnded(err)
			if errors.Is(err, errStopRequested) {
				return nil, nil
			}
			if r.retryWatchList(ctx, err) {
				continue
			}
			return nil, err
		}
		if !ended {
			w.Stop()
			r.streamEnded(nil)
			// Both S4 and S7 fetch the whole state again: a relist.
			r.refetchBecause(errWatchListEndedEarly)
			cuts++
			if cuts >= WatchListCutsBeforeList {
				// Transition S7: too many cut streams in a row → a paged LIST, this cycle.
				// Why through rvUnavailable: the watch cache answers a LIST at "0" or at
				// a specific RV in one response whatever the limit — as long as the
				// stream that was cut. Only a consistent read (RV "") comes in pages,
				// each a short request that gets through; the LIST's success clears it.
				r.setResourceVersionUnavailable(true)
				err := fmt.Errorf("%w: %d in a row, after %v: a proxy may be cutting long streams; listing instead",
					ErrWatchListCut, cuts, time.Since(start).Round(time.Millisecond))
				r.logger.Warn("watch-list cut again before its initial events ended; falling back to a paged LIST for this cycle", "err", err)
				if r.opts.Tracer != nil {
					r.emit(trace.Event{Kind: trace.WatchEnded, Reason: fmt.Sprintf("the watch-list stream closed before its initial events ended, %d times in a row; listing instead", cuts)})
				}
				return nil, err
			}
			// Transition S4: stream closed before the end bookmark → back off, start over.
			delay := r.backoff.Next(time.Now())
			r.logger.Warn("the watch-list stream closed before its initial events ended; backing off, then starting over",
				"cut", cuts, "of", WatchListCutsBeforeList, "after", time.Since(start).Round(time.Millisecond), "delay", delay.Round(time.Millisecond))
			if r.opts.Tracer != nil {
				r.emit(trace.Event{Kind: trace.WatchEnded, Reason: "the watch-list stream closed before its initial events ended; starting over"})
				r.emit(trace.Event{Kind: trace.Backoff, Duration: delay, Reason: "before the next watch-list"})
			}
			if !pause.For(ctx, delay) {
				return nil, nil
			}
			continue
		}
		// Transition S2: end bookmark → Replace, and keep this very watch open.
		r.setResourceVersionUnavailable(false)
		items := buffer.list()
		if r.opts.CheckWatchList {
			items = r.checkWatchList(ctx, items, bookmarkRV)
		}
		r.metrics.listed(len(items))
		if r.opts.Tracer != nil {
			r.emit(trace.Event{Kind: trace.Listed, Type: "watch-list", Items: len(items), ResourceVersion: bookmarkRV})
		}
		if err := r.store.Replace(items, bookmarkRV); err != nil {
			w.Stop()
			r.streamEnded(err)
			return nil, fmt.Errorf("replace store content with the watch-list of %s: %w", r.typeDescription, err)
		}
		r.setLastSyncResourceVersion(bookmarkRV)
		r.activity.listed(time.Now())
		return w, nil
	}
}

// retryWatchList decides whether a failed watch-list is retried as a watch-list:
// after a backoff for connection refused or 429, at once with RV "" for an expired
// or too-new RV. Anything else falls back to LIST.
//
// Differences from client-go: client-go's backoff sleep here ignores cancellation;
// ours returns as soon as ctx ends.
//
// client-go: tools/cache/reflector.go Reflector.watchList (isErrorRetriableWithSideEffectsFn)
func (r *Reflector[T]) retryWatchList(ctx context.Context, err error) bool {
	// Transition S3.
	switch {
	case isWatchErrorRetriable(err):
		r.logger.Debug("watch-list failed; backing off", "err", err)
		delay := r.backoff.Next(time.Now())
		if r.opts.Tracer != nil {
			r.emit(trace.Event{Kind: trace.Backoff, Duration: delay, Reason: traceWhy(err)})
		}
		pause.For(ctx, delay)
		return true
	case isExpiredError(err) || isTooLargeResourceVersionError(err):
		r.setResourceVersionUnavailable(true)
		r.logger.Info("watch-list got 410 Gone or a too-large resource version; starting again at the most recent", "err", err)
		r.refetchBecause(err)
		if r.opts.Tracer != nil {
			r.emit(trace.Event{Kind: trace.Relist, Reason: traceWhy(err) + "; watch-list again at the most recent"})
		}
		return true
	default:
		return false
	}
}
