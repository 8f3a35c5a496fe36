// Package fakeapi is an in-memory stand-in for one resource of the API server, for
// tests and benchmarks of the informer that must run inside a testing/synctest bubble
// (where real HTTP cannot) or without a control plane. It implements
// reflector.ListerWatcher: LIST returns every object at the current resource version,
// WATCH streams the changes after a resource version, and a test can close watches,
// expire old resource versions (410 Gone) or fail requests (403, 404) on demand.
//
// It is a model of the API server's observable contract, not of its implementation:
// one global, increasing resource version; a watch from RV "" or "0" starts at the
// current RV without replaying history; a watch-list (sendInitialEvents=true with
// resourceVersionMatch=NotOlderThan) sends one ADDED per object of the current
// state, in key order, then a bookmark annotated k8s.io/initial-events-end at the
// current RV, then the changes after it. Set WatchListUnsupported to play a client
// that declares it cannot serve that (client-go's fake clientsets do).
package fakeapi

import (
	"context"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/reflector"
)

// Server holds one resource's objects and its change log.
type Server[T indexer.Object] struct {
	mu sync.Mutex
	// rv is the last resource version handed out. Guarded by mu.
	rv int64
	// objects by key. Guarded by mu.
	objects map[string]T
	// log of every change, in order, with its resource version. Guarded by mu.
	log []logEntry[T]
	// oldestRV is the oldest resource version a watch may start from; older ones
	// get 410 Gone. Guarded by mu.
	oldestRV int64
	// watches are the open watches. Guarded by mu.
	watches map[*stream[T]]struct{}
	// listErr, watchErr fail the next requests when set. Guarded by mu.
	listErr, watchErr error
	// Lists and Watches count the requests served, with their options. Guarded by mu.
	lists, watchCalls []metav1.ListOptions
	// watchListUnsupported: see SetWatchListUnsupported. Guarded by mu.
	watchListUnsupported bool
	// pageDelay, when paging is set: see PageLists. Guarded by mu.
	paging    bool
	pageDelay time.Duration
	// sharding: see ShardLikeTheAPIServer. Guarded by mu.
	sharding bool
}

// PageLists makes every later LIST that asks for a Limit answer in pages of at most
// Limit objects, in key order (the continue token is the last key served), each
// answered delay after it was requested — a slow apiserver serving a large list. A
// page is read at the time it is served, not at the first page's resource version.
func (s *Server[T]) PageLists(delay time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paging, s.pageDelay = true, delay
}

// SetWatchListUnsupported makes the server declare, through
// IsWatchListSemanticsUnSupported, that it cannot serve a watch-list, so a reflector
// over it lists; a watch with sendInitialEvents then gets 400 Bad Request.
func (s *Server[T]) SetWatchListUnsupported(v bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchListUnsupported = v
}

// IsWatchListSemanticsUnSupported implements reflector.WatchListUnsupporter.
func (s *Server[T]) IsWatchListSemanticsUnSupported() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watchListUnsupported
}

// New returns an empty server at resource version 1.
func New[T indexer.Object]() *Server[T] {
	return &Server[T]{rv: 1, objects: map[string]T{}, watches: map[*stream[T]]struct{}{}}
}

// Create stores obj (with a new resource version) and sends Added to every watch.
func (s *Server[T]) Create(obj T) T { return s.change(watch.Added, obj) }

// Update stores obj (with a new resource version) and sends Modified.
func (s *Server[T]) Update(obj T) T { return s.change(watch.Modified, obj) }

// Delete removes obj and sends Deleted with its last state at a new resource version.
func (s *Server[T]) Delete(obj T) T { return s.change(watch.Deleted, obj) }

func (s *Server[T]) change(t watch.EventType, obj T) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj = obj.DeepCopyObject().(T)
	s.rv++
	obj.SetResourceVersion(strconv.FormatInt(s.rv, 10))
	key, _ := indexer.MetaNamespaceKeyFunc(obj)
	if t == watch.Deleted {
		delete(s.objects, key)
	} else {
		s.objects[key] = obj
	}
	ev := reflector.Event[T]{Type: t, Object: obj}
	s.log = append(s.log, logEntry[T]{rv: s.rv, ev: ev})
	for w := range s.watches {
		if !w.send(ev) {
			delete(s.watches, w) // stopped by its consumer
		}
	}
	return obj
}

// DeleteSilently removes obj without telling any watch, as if the delete event had
// been lost while the watch was down; only a relist can notice it.
func (s *Server[T]) DeleteSilently(obj T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, _ := indexer.MetaNamespaceKeyFunc(obj)
	delete(s.objects, key)
	s.rv++
	s.oldestRV = s.rv // history with the delete is gone
}

// ResourceVersion is the current resource version.
func (s *Server[T]) ResourceVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strconv.FormatInt(s.rv, 10)
}

// Bookmark sends every open watch a BOOKMARK at the current resource version, as
// kube-apiserver's watch cache does about once a minute.
func (s *Server[T]) Bookmark() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watches {
		b := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
		b.SetResourceVersion(strconv.FormatInt(s.rv, 10))
		if !w.send(reflector.Event[T]{Type: watch.Bookmark, Object: b}) {
			delete(s.watches, w) // stopped by its consumer
		}
	}
}

// CloseWatches ends every open watch normally, as a server-side timeout does.
func (s *Server[T]) CloseWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watches {
		w.close()
		delete(s.watches, w)
	}
}

// Compact forgets the history: watches from older resource versions get 410 Gone,
// and every open watch receives a 410 Expired error event and ends.
func (s *Server[T]) Compact() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oldestRV = s.rv
	for w := range s.watches {
		w.send(reflector.Event[T]{Type: watch.Error, Status: &apierrors.NewResourceExpired("too old resource version").ErrStatus})
		w.close()
		delete(s.watches, w)
	}
}

// FailLists makes every LIST fail with err until FailLists(nil).
func (s *Server[T]) FailLists(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listErr = err
}

// FailWatches makes every WATCH fail with err until FailWatches(nil).
func (s *Server[T]) FailWatches(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchErr = err
}

// ListCalls returns the options of every LIST served so far.
func (s *Server[T]) ListCalls() []metav1.ListOptions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]metav1.ListOptions(nil), s.lists...)
}

// WatchCalls returns the options of every WATCH requested so far.
func (s *Server[T]) WatchCalls() []metav1.ListOptions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]metav1.ListOptions(nil), s.watchCalls...)
}

// List implements reflector.Lister: every object, unpaged, at the current RV (unless
// PageLists).
func (s *Server[T]) List(ctx context.Context, opts metav1.ListOptions) (reflector.ListResult[T], error) {
	s.mu.Lock()
	paging, delay := s.paging && opts.Limit > 0, s.pageDelay
	s.mu.Unlock()
	if paging && delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return reflector.ListResult[T]{}, ctx.Err()
		case <-t.C:
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists = append(s.lists, opts)
	if s.listErr != nil {
		return reflector.ListResult[T]{}, s.listErr
	}
	if err := ctx.Err(); err != nil {
		return reflector.ListResult[T]{}, err
	}
	rv := strconv.FormatInt(s.rv, 10)
	keep, echo, err := s.shardOfLocked(opts)
	if err != nil {
		return reflector.ListResult[T]{}, err
	}
	if paging {
		var keys []string
		for _, k := range slices.Sorted(maps.Keys(s.objects)) {
			if keep == nil || keep(s.objects[k]) {
				keys = append(keys, k)
			}
		}
		from, _ := slices.BinarySearch(keys, opts.Continue)
		if opts.Continue != "" && from < len(keys) && keys[from] == opts.Continue {
			from++
		}
		to := min(from+int(opts.Limit), len(keys))
		res := reflector.ListResult[T]{ResourceVersion: rv, ShardSelector: echo}
		for _, k := range keys[from:to] {
			res.Items = append(res.Items, s.objects[k])
		}
		if to < len(keys) {
			res.Continue = keys[to-1]
		}
		return res, nil
	}
	items := make([]T, 0, len(s.objects))
	for _, obj := range s.objects {
		if keep == nil || keep(obj) {
			items = append(items, obj)
		}
	}
	return reflector.ListResult[T]{Items: items, ResourceVersion: rv, ShardSelector: echo}, nil
}

// Watch implements reflector.Watcher: the changes after opts.ResourceVersion.
func (s *Server[T]) Watch(ctx context.Context, opts metav1.ListOptions) (reflector.Watch[T], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchCalls = append(s.watchCalls, opts)
	if s.watchErr != nil {
		return nil, s.watchErr
	}
	keep, _, err := s.shardOfLocked(opts)
	if err != nil {
		return nil, err
	}
	watchList := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	if watchList {
		return s.watchListLocked(ctx, opts, keep)
	}
	from := s.rv
	if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		rv, err := strconv.ParseInt(opts.ResourceVersion, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest("invalid resourceVersion " + strconv.Quote(opts.ResourceVersion))
		}
		if rv < s.oldestRV {
			return nil, apierrors.NewResourceExpired("too old resource version: " + opts.ResourceVersion)
		}
		from = rv
	}
	w := newStream[T]()
	w.keep = keep
	for _, e := range s.log {
		if e.rv > from {
			w.send(e.ev)
		}
	}
	return s.openLocked(ctx, w), nil
}

// watchListLocked serves a watch with sendInitialEvents=true: the current state as
// ADDED events, in key order, then the end bookmark, then live changes. Like the
// apiserver it requires resourceVersionMatch=NotOlderThan and bookmarks, and serves
// the newest state whatever (valid) RV is asked for.
func (s *Server[T]) watchListLocked(ctx context.Context, opts metav1.ListOptions, keep func(T) bool) (reflector.Watch[T], error) {
	if s.watchListUnsupported {
		return nil, apierrors.NewBadRequest("sendInitialEvents is not supported by this server")
	}
	if opts.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan || !opts.AllowWatchBookmarks {
		return nil, apierrors.NewBadRequest("sendInitialEvents requires resourceVersionMatch=NotOlderThan and allowWatchBookmarks=true")
	}
	if opts.ResourceVersion != "" {
		rv, err := strconv.ParseInt(opts.ResourceVersion, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest("invalid resourceVersion " + strconv.Quote(opts.ResourceVersion))
		}
		if rv > s.rv {
			return nil, apierrors.NewTimeoutError("Too large resource version: "+opts.ResourceVersion, 1)
		}
	}
	keys := slices.Sorted(maps.Keys(s.objects))
	w := newStream[T]()
	w.keep = keep
	for _, k := range keys {
		w.send(reflector.Event[T]{Type: watch.Added, Object: s.objects[k]})
	}
	end := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	end.SetResourceVersion(strconv.FormatInt(s.rv, 10))
	end.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	w.send(reflector.Event[T]{Type: watch.Bookmark, Object: end})
	return s.openLocked(ctx, w), nil
}

// openLocked registers w for live changes and ties it to ctx.
func (s *Server[T]) openLocked(ctx context.Context, w *stream[T]) *stream[T] {
	s.watches[w] = struct{}{}
	// Owner: this watch. Exits when ctx ends or the watch is stopped or closed.
	go func() {
		select {
		case <-ctx.Done():
			w.Stop()
		case <-w.stopped:
		}
	}()
	return w
}

type logEntry[T any] struct {
	rv int64
	ev reflector.Event[T]
}

var _ reflector.ListerWatcher[indexer.Object] = (*Server[indexer.Object])(nil)

// StatusError builds an API error with the given HTTP code, for FailLists.
func StatusError(code int, message string) error {
	switch code {
	case http.StatusForbidden:
		return apierrors.NewForbidden(schemaResource, "", errString(message))
	case http.StatusNotFound:
		return apierrors.NewNotFound(schemaResource, message)
	case http.StatusTooManyRequests:
		return apierrors.NewTooManyRequests(message, 1)
	case http.StatusGone:
		return apierrors.NewResourceExpired(message)
	default:
		return apierrors.NewInternalError(errString(message))
	}
}
