package parity

import (
	"context"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/reflector"
)

// The scripted server (informer_server_test.go) as each library's ListerWatcher, and
// the watch stream both hand over.

func mapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// eventObject is the object a watch event carries: the ConfigMap, or for a BOOKMARK
// only its resourceVersion (and the annotation that ends a watch-list's initial events).
func eventObject(ev serverEvent) *corev1.ConfigMap {
	if ev.typ != watch.Bookmark {
		return configMap(ev.name, ev.rv)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.Itoa(ev.rv)}}
	if ev.initialEnd {
		cm.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	return cm
}

func expiredStatus() *metav1.Status {
	return &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"}
}

// chanWatch is a watch stream of either library: a buffered channel (so the server
// never waits for a reflector), closed once by whichever side ends it first.
type chanWatch[E any] struct {
	mu     sync.Mutex
	ch     chan E
	closed bool
}

func newChanWatch[E any]() *chanWatch[E] { return &chanWatch[E]{ch: make(chan E, 1000)} }

func (w *chanWatch[E]) ResultChan() <-chan E { return w.ch }

// Stop is the reflector ending the stream.
func (w *chanWatch[E]) Stop() { w.close() }

func (w *chanWatch[E]) push(ev E) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.ch <- ev
	}
}

func (w *chanWatch[E]) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.ch)
	}
}

// oursLW is the server as our reflector's ListerWatcher.
type oursLW struct {
	s *cmServer
	e *endpoint
}

func (lw oursLW) List(_ context.Context, opts metav1.ListOptions) (reflector.ListResult[*corev1.ConfigMap], error) {
	page, err := lw.s.list(lw.e, opts)
	if err != nil {
		return reflector.ListResult[*corev1.ConfigMap]{}, err
	}
	items := make([]*corev1.ConfigMap, len(page.names))
	for i := range page.names {
		items[i] = configMap(page.names[i], page.rvs[i])
	}
	return reflector.ListResult[*corev1.ConfigMap]{Items: items, ResourceVersion: strconv.Itoa(page.rv), Continue: page.cont}, nil
}

func (lw oursLW) Watch(_ context.Context, opts metav1.ListOptions) (reflector.Watch[*corev1.ConfigMap], error) {
	w := newChanWatch[reflector.Event[*corev1.ConfigMap]]()
	err := lw.s.watch(lw.e, opts, &serverWatch{
		send: func(ev serverEvent) {
			w.push(reflector.Event[*corev1.ConfigMap]{Type: ev.typ, Object: eventObject(ev)})
		},
		fail: func(st *metav1.Status) {
			w.push(reflector.Event[*corev1.ConfigMap]{Type: watch.Error, Status: st})
			w.close()
		},
		end: w.close,
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// clientGoLW is the server as client-go's ListerWatcher.
type clientGoLW struct {
	s *cmServer
	e *endpoint
}

var _ cache.ListerWatcherWithContext = clientGoLW{}

func (lw clientGoLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

func (lw clientGoLW) ListWithContext(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	page, err := lw.s.list(lw.e, opts)
	if err != nil {
		return nil, err
	}
	list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(page.rv), Continue: page.cont}}
	for i := range page.names {
		list.Items = append(list.Items, *configMap(page.names[i], page.rvs[i]))
	}
	return list, nil
}

func (lw clientGoLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

func (lw clientGoLW) WatchWithContext(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w := newChanWatch[watch.Event]()
	err := lw.s.watch(lw.e, opts, &serverWatch{
		send: func(ev serverEvent) { w.push(watch.Event{Type: ev.typ, Object: eventObject(ev)}) },
		fail: func(st *metav1.Status) {
			w.push(watch.Event{Type: watch.Error, Object: st})
			w.close()
		},
		end: w.close,
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// IsWatchListSemanticsUnSupported makes client-go's reflector LIST first, as ours does
// with reflector.PagedList: the server here does not stream an initial state.
//
// client-go: util/watchlist/watch_list.go DoesClientNotSupportWatchListSemantics
func (clientGoLW) IsWatchListSemanticsUnSupported() bool { return true }
