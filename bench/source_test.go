package bench

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/reflector"
)

// The in-process sources of the informer benchmarks: no apiserver, each side handed
// what its real REST path would hand its reflector.

// oursSource lists what list returns, each item copied (our RESTListerWatcher copies
// every item out of the decoded page, so the cache never shares the page's array),
// and serves every WATCH from events.
func oursSource[E any, T interface {
	*E
	indexer.Object
}](list func() ([]T, string), events chan reflector.Event[T]) reflector.ListWatch[T] {
	return reflector.ListWatch[T]{
		ListFunc: func(context.Context, metav1.ListOptions) (reflector.ListResult[T], error) {
			objs, rv := list()
			items := make([]T, len(objs))
			for i, o := range objs {
				cp := *(*E)(o)
				items[i] = &cp
			}
			return reflector.ListResult[T]{Items: items, ResourceVersion: rv}, nil
		},
		WatchFunc: func(context.Context, metav1.ListOptions) (reflector.Watch[T], error) {
			return chanWatch[T]{ch: events}, nil
		},
		// The events channel carries no watch-list: both sides LIST then WATCH
		// (clientGoSource declares the same).
		WatchListUnsupported: true,
	}
}

// clientGoSource lists what list returns (a list object built once by the caller:
// client-go's reflector copies the items out of it itself, meta.ExtractListWithAlloc)
// and serves every WATCH from events. Its watch-list is declared unsupported, so its
// reflector does LIST then WATCH, as oursSource's does.
func clientGoSource(list func() runtime.Object, events chan watch.Event) cache.ListerWatcher {
	return noWatchList{&cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) { return list(), nil },
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewProxyWatcher(events), nil
		},
	}}
}

// namespaceIndexed is the one index every benchmark informer has, on both sides.
func namespaceIndexed[T indexer.Object](queue informer.QueueKind) informer.Options[T] {
	return informer.Options[T]{
		Queue:    queue,
		Indexers: indexer.Indexers[T]{indexer.NamespaceIndex: indexer.MetaNamespaceIndexFunc[T]},
	}
}

var clientGoNamespaceIndexed = cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}

// chanWatch is a reflector.Watch over a channel the benchmark feeds; Stop does not
// close it (the benchmark owns it) — the reflector stops reading on ctx cancel.
type chanWatch[T any] struct{ ch chan reflector.Event[T] }

func (c chanWatch[T]) ResultChan() <-chan reflector.Event[T] { return c.ch }
func (c chanWatch[T]) Stop()                                 {}

// noWatchList tells client-go's reflector that this source cannot do the streaming
// watch-list (on by default in client-go 1.35+, and in ours), so both sides take the
// same LIST-then-WATCH path.
type noWatchList struct{ *cache.ListWatch }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }
