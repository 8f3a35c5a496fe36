package reflector

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/trace"
)

// listAndWatch is one cycle of the state machine: fetch the full state (watch-list
// or LIST), then watch until the watch cannot go on. It returns the error that ended
// the cycle; nil when ctx was cancelled.
//
// client-go: tools/cache/reflector.go Reflector.ListAndWatchWithContext
func (r *Reflector[T]) listAndWatch(ctx context.Context) error {
	var w Watch[T]
	if r.useWatchList {
		var err error
		w, err = r.watchList(ctx)
		if ctx.Err() != nil {
			if w != nil {
				w.Stop()
			}
			return nil
		}
		if err != nil {
			// Transition S5 (and S7): watch-list refused, or cut too often → paged
			// LIST, in this same cycle.
			if !errors.Is(err, ErrWatchListCut) { // S7 logged it already, as a warning
				r.logger.Debug("watch-list failed; falling back to LIST", "err", err)
				r.refetchBecause(err)
			}
			w = nil
		}
	}
	if w == nil {
		if err := r.list(ctx); err != nil {
			return err
		}
	}
	r.logger.Debug("store populated", "resourceVersion", r.LastSyncResourceVersion())
	return r.watchWithResync(ctx, w)
}

// relistResourceVersion chooses the RV of the next LIST (transition L1):
//   - "0" for the first list: any recent state will do, so the watch cache serves it;
//   - the last synced RV afterwards: "at least as new as what I have", so the
//     reflector never goes back in time, still served by the watch cache;
//   - "" (a consistent read from etcd) after that RV proved unavailable.
//
// client-go: tools/cache/reflector.go Reflector.relistResourceVersion
func (r *Reflector[T]) relistResourceVersion() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	switch {
	case r.rvUnavailable:
		return ""
	case r.lastSyncRV == "":
		return "0"
	default:
		return r.lastSyncRV
	}
}

// listFunc is one logical LIST: paged or not.
type listFunc[T any] func(ctx context.Context, opts metav1.ListOptions) (ListResult[T], bool, error)

// lister chooses how the LIST at rv is paged (transition L2).
//
// client-go: tools/cache/reflector.go Reflector.list (the pager.PageSize switch)
func (r *Reflector[T]) lister(rv string) listFunc[T] {
	// The LIST's first page is the server's answer to this fetch (relists.go).
	first := true
	answered := func() {
		if first {
			first = false
			r.fetchAnswered()
		}
	}
	var size int64
	switch {
	case r.opts.PageSize != 0:
		size = r.opts.PageSize
	case r.paginatedResult:
		// The first list came back paged: the watch cache is off for this resource
		// and paging is what protects the server.
		size = DefaultPageSize
	case rv != "" && rv != "0":
		// Why unpaged: the watch cache serves a list at a specific RV only without a
		// limit; with one, the request would go to etcd. After an apiserver restart
		// that is the thundering herd on etcd we want to avoid.
		return func(ctx context.Context, opts metav1.ListOptions) (ListResult[T], bool, error) {
			res, err := pageStamper[T]{r.lw, &r.activity, answered}.List(ctx, opts)
			return res, false, err
		}
	default:
		size = DefaultPageSize
	}
	p, _ := NewPager[T](pageStamper[T]{r.lw, &r.activity, answered}, PagerOptions{PageSize: size}) // lw non-nil and size > 0: cannot fail
	return p.List
}

// list performs the LIST step: list at relistResourceVersion, retry at once with
// RV "" if that RV is expired or too new, then Replace the store's content.
//
// Differences from client-go: client-go runs the list in a goroutine with a
// context.Background() pager, so cancelling stops the wait but not the request. We
// pass ctx down, which aborts the HTTP request itself, and need no goroutine.
//
// client-go: tools/cache/reflector.go Reflector.list
func (r *Reflector[T]) list(ctx context.Context) error {
	opts := metav1.ListOptions{ResourceVersion: r.relistResourceVersion()}
	// Invariant: one list call keeps one paging decision, including for the retry
	// at RV "" below (client-go reuses its pager the same way).
	listAll := r.lister(opts.ResourceVersion)
	began := time.Now()
	r.activity.listStarted(began)
	defer r.activity.listEnded()
	r.metrics.listStarted()
	if r.opts.Tracer != nil {
		r.emit(trace.Event{Kind: trace.ListStarted, Type: "list", ResourceVersion: opts.ResourceVersion})
	}
	res, paginated, err := listAll(ctx, opts)
	if isExpiredError(err) || isTooLargeResourceVersionError(err) {
		// Transition L3: LIST 410/too-large → LIST at RV "" (consistent read), now.
		r.setResourceVersionUnavailable(true)
		retry := metav1.ListOptions{ResourceVersion: r.relistResourceVersion()}
		r.logger.Info("list got 410 Gone or a too-large resource version; listing again at the most recent",
			"resourceVersion", opts.ResourceVersion, "err", err)
		r.refetchBecause(err)
		if r.opts.Tracer != nil {
			r.emit(trace.Event{Kind: trace.Relist, Reason: traceWhy(err) + "; listing again at the most recent"})
			r.emit(trace.Event{Kind: trace.ListStarted, Type: "list", ResourceVersion: retry.ResourceVersion})
		}
		res, paginated, err = listAll(ctx, retry)
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", r.typeDescription, err)
	}
	// Why only for RV "0": a list at "" may be paged by etcd even when the watch
	// cache is on; only a paged answer at "0" says the cache is off.
	if opts.ResourceVersion == "0" && paginated {
		r.paginatedResult = true
	}
	r.setResourceVersionUnavailable(false)
	r.logger.Debug("listed", "items", len(res.Items), "resourceVersion", res.ResourceVersion, "paginated", paginated, "took", time.Since(began))
	// Transition L4: the list is the store's new content.
	r.metrics.listed(len(res.Items))
	if r.opts.Tracer != nil {
		r.emit(trace.Event{Kind: trace.Listed, Type: "list", Items: len(res.Items), ResourceVersion: res.ResourceVersion, Paged: paginated})
	}
	if err := r.store.Replace(res.Items, res.ResourceVersion); err != nil {
		return fmt.Errorf("replace store content with the list of %s: %w", r.typeDescription, err)
	}
	r.setLastSyncResourceVersion(res.ResourceVersion)
	r.activity.listed(time.Now())
	return nil
}
