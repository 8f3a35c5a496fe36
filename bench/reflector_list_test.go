package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/bench/internal/sidebyside"
	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/reflector"
)

// listPageSize is both reflectors' default page size.
const listPageSize = 500

// BenchmarkReflectorListPaged: a reflector lists 10,000 objects in pages of 500 from
// an in-process source into a plain store, then starts its watch (which never sends
// anything); one op ends at the store's first Replace. No apiserver, no decoding: the
// reflector's own work — paging, collecting the items, Replace.
//
// Fair: each side's pager asks for the same pages; ours is handed each page's items
// copied one by one (what our REST path does after decoding), client-go a list object
// over the page from which its reflector makes the same copies
// (meta.ExtractListWithAlloc); each stores into its own unindexed thread-safe store.
// [client-go: BenchmarkReflectorList]
func BenchmarkReflectorListPaged(b *testing.B) {
	const n = 10_000
	pods := scaledPods(n, 100)
	cms := newInformerWorkload(n).list
	b.Run("kind=Pod", func(b *testing.B) {
		benchmarkReflectorList(b, pods, func(items []*corev1.Pod, rv, next string) runtime.Object {
			l := podList(items, 0)
			l.ListMeta = metav1.ListMeta{ResourceVersion: rv, Continue: next}
			return l
		}, &corev1.Pod{})
	})
	b.Run("kind=ConfigMap", func(b *testing.B) {
		benchmarkReflectorList(b, cms, func(items []*corev1.ConfigMap, rv, next string) runtime.Object {
			l := configMapList(items, 0)
			l.ListMeta = metav1.ListMeta{ResourceVersion: rv, Continue: next}
			return l
		}, &corev1.ConfigMap{})
	})
}

// page returns the page of objs that opts asks for and the continue token of the next.
func page[T any](objs []T, opts metav1.ListOptions) ([]T, string) {
	start, _ := strconv.Atoi(opts.Continue)
	end := len(objs)
	if opts.Limit > 0 {
		end = min(end, start+int(opts.Limit))
	}
	next := ""
	if end < len(objs) {
		next = strconv.Itoa(end)
	}
	return objs[start:end], next
}

// replaceSignal closes replaced on the first Replace.
type replaceSignal struct {
	once     sync.Once
	replaced chan struct{}
}

func (r *replaceSignal) signal() { r.once.Do(func() { close(r.replaced) }) }

type oursSignalStore[T indexer.Object] struct {
	indexer.Indexer[T]
	*replaceSignal
}

func (s oursSignalStore[T]) Replace(items []T, rv string) error {
	err := s.Indexer.Replace(items, rv)
	s.signal()
	return err
}

type clientGoSignalStore struct {
	cache.Store
	*replaceSignal
}

func (s clientGoSignalStore) Replace(items []any, rv string) error {
	err := s.Store.Replace(items, rv)
	s.signal()
	return err
}

func benchmarkReflectorList[E any, T interface {
	*E
	indexer.Object
}](b *testing.B, objs []T, clientGoPage func(items []T, rv, next string) runtime.Object, example runtime.Object) {
	// client-go's pages are list objects, built once outside the timed loop.
	cgPages := map[string]runtime.Object{}
	for start := 0; start < len(objs); start += listPageSize {
		items, next := page(objs, metav1.ListOptions{Limit: listPageSize, Continue: strconv.Itoa(start)})
		cgPages[strconv.Itoa(start)] = clientGoPage(items, "1", next)
	}
	cgPages[""] = cgPages["0"]
	sidebyside.Pair(b, func(b *testing.B) {
		never := make(chan reflector.Event[T])
		lw := reflector.ListWatch[T]{
			ListFunc: func(_ context.Context, opts metav1.ListOptions) (reflector.ListResult[T], error) {
				objs, next := page(objs, opts)
				items := make([]T, len(objs))
				for i, o := range objs {
					cp := *(*E)(o)
					items[i] = &cp
				}
				return reflector.ListResult[T]{Items: items, ResourceVersion: "1", Continue: next}, nil
			},
			WatchFunc: func(context.Context, metav1.ListOptions) (reflector.Watch[T], error) {
				return chanWatch[T]{ch: never}, nil
			},
		}
		sidebyside.Loop(b, func() {
			store := oursSignalStore[T]{indexer.New(indexer.Options[T]{}), &replaceSignal{replaced: make(chan struct{})}}
			r, err := reflector.NewReflector[T](lw, store, reflector.Options[T]{InitialList: reflector.PagedList, PageSize: listPageSize})
			if err != nil {
				b.Fatal(err)
			}
			stop := running(r.Run)
			<-store.replaced
			stop()
			checkCached(b, len(store.ListKeys()), len(objs))
		})
	}, func(b *testing.B) {
		never := make(chan watch.Event)
		lw := noWatchList{&cache.ListWatch{
			ListWithContextFunc: func(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				p, ok := cgPages[opts.Continue]
				if !ok {
					return nil, fmt.Errorf("no page at %q", opts.Continue)
				}
				return p, nil
			},
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
				return watch.NewProxyWatcher(never), nil
			},
		}}
		sidebyside.Loop(b, func() {
			store := clientGoSignalStore{cache.NewStore(cache.MetaNamespaceKeyFunc), &replaceSignal{replaced: make(chan struct{})}}
			r := cache.NewReflector(lw, example, store, 0)
			r.WatchListPageSize = listPageSize
			stop := running(r.RunWithContext)
			<-store.replaced
			stop()
			checkCached(b, len(store.ListKeys()), len(objs))
		})
	})
}

func checkCached(b *testing.B, got, want int) {
	b.Helper()
	if got != want {
		b.Fatalf("the store holds %d objects, want %d", got, want)
	}
}
