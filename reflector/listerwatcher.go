package reflector

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// ListResult is one page of a LIST: the objects, the resource version the list was
// served at, and the continue token of the next page ("" on the last page).
//
// Invariant: Items never alias the decoder's list object; every item is its own
// allocation, so keeping one object does not keep a whole page alive.
type ListResult[T any] struct {
	Items           []T
	ResourceVersion string
	Continue        string
	// ShardSelector is the shard selector the server says it applied to this page
	// (the list's metadata.shardInfo.selector): "" when it applied none, which is
	// also what a server without the ShardedListAndWatch feature gate sends when it
	// ignored the one it was asked for. See listwatch.WithShard.
	ShardSelector string
}

// Event is one watch event.
//
//   - Added, Modified, Deleted: Object is the object (for Deleted, its last state).
//   - Bookmark: Object carries only metadata: the resource version the watch has
//     reached and, for watch-list, the annotation k8s.io/initial-events-end.
//   - Error: Status is the API status the server sent (e.g. 410 Expired); Object is
//     the zero value.
type Event[T any] struct {
	Type   watch.EventType
	Object T
	Status *metav1.Status
}

// Watch is an open watch stream.
//
// client-go: apimachinery/pkg/watch/watch.go Interface
type Watch[T any] interface {
	// ResultChan delivers the events in server order. It is closed when the stream
	// ends, whether the server ended it or Stop was called.
	ResultChan() <-chan Event[T]
	// Stop ends the stream and releases its connection. It may be called more than
	// once. When it returns, no goroutine of the stream is left running.
	Stop()
}

// Lister performs one LIST request. It does not page: the Pager does.
type Lister[T any] interface {
	List(ctx context.Context, opts metav1.ListOptions) (ListResult[T], error)
}

// Watcher opens one WATCH request.
type Watcher[T any] interface {
	Watch(ctx context.Context, opts metav1.ListOptions) (Watch[T], error)
}

// ListerWatcher is the reflector's view of the API server for one resource: a LIST
// and a WATCH with the same selectors. listwatch.New builds one over a REST client
// (package listwatch, which imports this one); tests script their own.
//
// client-go: tools/cache/listwatch.go ListerWatcherWithContext
type ListerWatcher[T any] interface {
	Lister[T]
	Watcher[T]
}

// WatchListUnsupporter is implemented by a ListerWatcher that knows it cannot serve a
// watch-list: a fake that ignores sendInitialEvents, or a proxy to an old server. A
// reflector whose ListerWatcher returns true here uses a paged LIST even when
// Options.InitialList asks for WatchList.
//
// Why it exists: a watch-list ends its initial state with a bookmark; a Watcher that
// ignores sendInitialEvents never sends it, and the reflector would wait for it until
// the watch times out, cycle after cycle. client-go's fake clientsets declare
// themselves this way for the same reason.
//
// client-go: util/watchlist/watch_list.go DoesClientNotSupportWatchListSemantics
type WatchListUnsupporter interface {
	IsWatchListSemanticsUnSupported() bool
}

// ErrNoFunc is returned by ListWatch when the function for the call is nil.
var ErrNoFunc = errors.New("reflector: ListWatch function is nil")

// ListWatch adapts two functions to a ListerWatcher, for tests and for resources that
// need a special request (for example a different path).
//
// client-go: tools/cache/listwatch.go ListWatch
type ListWatch[T any] struct {
	ListFunc  func(ctx context.Context, opts metav1.ListOptions) (ListResult[T], error)
	WatchFunc func(ctx context.Context, opts metav1.ListOptions) (Watch[T], error)
	// WatchListUnsupported declares that WatchFunc ignores sendInitialEvents, so a
	// reflector over this ListWatch always lists (see WatchListUnsupporter).
	WatchListUnsupported bool
}

// IsWatchListSemanticsUnSupported reports WatchListUnsupported.
//
// client-go: tools/cache/listwatch.go listWatcherWithWatchListSemanticsWrapper
func (lw ListWatch[T]) IsWatchListSemanticsUnSupported() bool { return lw.WatchListUnsupported }

// List calls ListFunc.
func (lw ListWatch[T]) List(ctx context.Context, opts metav1.ListOptions) (ListResult[T], error) {
	if lw.ListFunc == nil {
		return ListResult[T]{}, ErrNoFunc
	}
	return lw.ListFunc(ctx, opts)
}

// Watch calls WatchFunc.
func (lw ListWatch[T]) Watch(ctx context.Context, opts metav1.ListOptions) (Watch[T], error) {
	if lw.WatchFunc == nil {
		return nil, ErrNoFunc
	}
	return lw.WatchFunc(ctx, opts)
}
