package reflector

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BookmarkInterval is how often kube-apiserver's watch cache sends a BOOKMARK to each
// watch that allows them, as every watch of this package does (W1, S1): about once a
// minute, and once more 2s before the watch's timeout. A watch of a resource the
// watch cache serves is therefore never silent much longer than this, however quiet
// the resource: a longer silence means the stream has stopped delivering.
//
// Pitfall: a resource the apiserver serves from etcd directly — no watch cache for it
// (--watch-cache-sizes=<resource>#0) or none at all (--watch-cache=false) — gets no
// periodic bookmarks, only a watch-list's end bookmark: its watch is silent whenever
// the resource is. So is a watch of a server that is not kube-apiserver and sends none.
//
// kube-apiserver: k8s.io/apiserver/pkg/storage/cacher/cacher.go defaultBookmarkFrequency
// (a minute), cache_watcher.go cacheWatcher.nextBookmarkTime (and 2s before the
// deadline); for etcd, storage/etcd3/watcher.go isInitialEventsEndBookmarkRequired
// (no bookmark for external clients but the end of the initial events).
const BookmarkInterval = time.Minute

// WatchActivity is when the reflector's watch last showed life, and whether one is
// open: what a check for a stuck watch reads (informer's WatchHealthy). Times are
// read from the reflector's clock (time.Now) and compare with it.
type WatchActivity struct {
	// Open: a watch stream is open now — a WATCH, or a watch-list's stream, from the
	// moment the server answered the request until the reflector stopped it.
	Open bool
	// Since is when Open last changed: when the current watch opened, or when the
	// last one ended. Zero before the first watch opened.
	Since time.Time
	// LastEvent is when the watch last delivered something: an ADDED, MODIFIED or
	// DELETED event, or a BOOKMARK (a watch-list's end bookmark included). Zero before
	// the first. An ERROR event does not count: it ends the watch.
	LastEvent time.Time
	// LastList is when a list last replaced the store: a LIST, or a watch-list at its
	// end bookmark. Zero before the first.
	LastList time.Time
	// Listing: a LIST is in progress — the first list, a relist, or the fallback after
	// a watch-list failed — from its first request until it replaced the store or
	// failed. A relist of many pages from a slow apiserver can take minutes with no
	// watch open; each page it receives is a sign of life.
	Listing bool
	// ListSince is when the LIST in progress began (zero while none is).
	ListSince time.Time
	// LastPage is when the LIST in progress last received a page (zero before its
	// first, and while none is in progress).
	LastPage time.Time
}

// LastActive is the last time the watch showed life: the latest of LastEvent,
// LastList, while a watch is open its opening (Since), and while a LIST is in
// progress its start (ListSince) and its last page (LastPage). A stuck-watch check
// measures silence from here. Why the opening counts: a new watch's first bookmark
// comes about BookmarkInterval after it opened, so a fresh watch that has delivered
// nothing yet is not silent for longer than it has existed. A watch that ended does
// not count: while none is open, nothing can arrive. Why the pages count: a relist
// that is receiving pages is making progress, however long it takes in all.
func (a WatchActivity) LastActive() time.Time {
	last := a.LastEvent
	for _, t := range []time.Time{a.LastList, a.ListSince, a.LastPage} {
		if t.After(last) {
			last = t
		}
	}
	if a.Open && a.Since.After(last) {
		last = a.Since
	}
	return last
}

// WatchActivity returns when the watch last showed life and whether one is open. It
// is safe to call from any goroutine, at any time: before Run, everything is zero.
//
// Differences from client-go: no counterpart. Its reflector keeps the time of the
// last event only to warn about a missing end bookmark during a watch-list
// (tools/cache/reflector.go initialEventsEndBookmarkTicker), and exposes none of it.
func (r *Reflector[T]) WatchActivity() WatchActivity { return r.activity.get() }

// watchActivity records a reflector's WatchActivity. Run's goroutine writes it; any
// goroutine reads it.
//
// Cost: one uncontended lock per watch opened or ended, per list, and per burst of
// events — handleWatch stamps the time when the stream goes quiet (and every
// stampEvery events of a burst that does not), not at every event, as it does for the
// missing end bookmark's warning.
type watchActivity struct {
	mu sync.Mutex
	a  WatchActivity // guarded by mu
}

// stampEvery is how many events of an uninterrupted burst handleWatch handles before
// it stamps LastEvent anyway: a burst that never lets the stream go quiet (a large
// relist from a fast server) still moves LastEvent every few milliseconds.
const stampEvery = 1024

func (w *watchActivity) get() WatchActivity {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.a
}

// opened records a watch stream the server opened at now.
func (w *watchActivity) opened(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.a.Open, w.a.Since = true, now
}

// ended records that the open watch ended at now, and reports whether one was open.
func (w *watchActivity) ended(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.a.Open {
		return false
	}
	w.a.Open, w.a.Since = false, now
	return true
}

// delivered records that the watch's last event so far was handled by now.
func (w *watchActivity) delivered(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.a.LastEvent = now
}

// listed records that a list replaced the store at now.
func (w *watchActivity) listed(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.a.LastList = now
}

// listStarted records that a LIST began at now; listEnded that it is over (the store
// replaced, or the LIST failed).
func (w *watchActivity) listStarted(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.a.Listing, w.a.ListSince, w.a.LastPage = true, now, time.Time{}
}

func (w *watchActivity) listEnded() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.a.Listing, w.a.ListSince, w.a.LastPage = false, time.Time{}, time.Time{}
}

// paged records that the LIST in progress received a page at now.
func (w *watchActivity) paged(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.a.LastPage = now
}

// pageStamper is the reflector's Lister as its LIST sees it: every page that arrives
// is stamped as a sign of life (WatchActivity.LastPage).
type pageStamper[T any] struct {
	lister   Lister[T]
	activity *watchActivity
	// answered runs after every page received (the reflector counts the first).
	answered func()
}

func (p pageStamper[T]) List(ctx context.Context, opts metav1.ListOptions) (ListResult[T], error) {
	res, err := p.lister.List(ctx, opts)
	if err == nil {
		p.activity.paged(time.Now())
		p.answered()
	}
	return res, err
}

// streamOpened records a watch stream the server opened, requested at start: in the
// metrics, and as the watch's activity. Each is ended by one streamEnded, or by
// Run's return.
func (r *Reflector[T]) streamOpened(start time.Time) {
	r.metrics.watchStarted(start)
	r.activity.opened(time.Now())
}

// streamEnded records the end of the open watch stream, which ended with err.
func (r *Reflector[T]) streamEnded(err error) {
	r.metrics.watchEnded(err)
	r.activity.ended(time.Now())
}

// runEnded marks the watch closed when Run returns: a stream the reflector stops
// because ctx ended between a watch-list and the watch loop is not ended otherwise.
func (r *Reflector[T]) runEnded() {
	if r.activity.ended(time.Now()) {
		r.metrics.watchClosed()
	}
}
