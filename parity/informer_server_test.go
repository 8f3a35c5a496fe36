package parity

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/reflector"
)

// The API server TestInformer plays for both informers: one store of ConfigMaps (in
// namespace "ns") with a resourceVersion counter and the history of every change, and
// one endpoint per library — its LIST and WATCH requests, and the watch it has open.
// Both libraries read the same state, so they are told the same story; each
// endpoint records the requests its reflector made, so the transcripts show when a
// side listed or watched and from where.

// serverEvent is one change: the object's name and the resourceVersion the change
// gave it (a DELETED event carries the deletion's resourceVersion, as the API server's
// does).
type serverEvent struct {
	typ  watch.EventType
	name string
	rv   int
}

// endpoint is one library's connection to the server.
type endpoint struct {
	requests []string // LIST and WATCH requests since the last observation
	open     *serverWatch
}

// serverWatch is how the server reaches one open watch, whatever its event type.
type serverWatch struct {
	send   func(serverEvent)
	expire func() // an ERROR event with 410 Expired, then the end of the stream
	end    func() // the end of the stream, without an error
}

type cmServer struct {
	mu      sync.Mutex
	rv      int
	objs    map[string]int // name → resourceVersion of the stored object
	history []serverEvent
	ours    endpoint
	theirs  endpoint
}

func newCMServer() *cmServer { return &cmServer{objs: map[string]int{}} }

// write creates or updates name at the next resourceVersion and sends the event to
// every open watch.
func (s *cmServer) write(name string) serverEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	typ := watch.Added
	if _, ok := s.objs[name]; ok {
		typ = watch.Modified
	}
	s.rv++
	s.objs[name] = s.rv
	return s.publish(serverEvent{typ, name, s.rv})
}

// remove deletes name if it exists; ok is false when there was nothing to delete.
func (s *cmServer) remove(name string) (ev serverEvent, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objs[name]; !ok {
		return serverEvent{}, false
	}
	s.rv++
	delete(s.objs, name)
	return s.publish(serverEvent{watch.Deleted, name, s.rv}), true
}

func (s *cmServer) publish(ev serverEvent) serverEvent {
	s.history = append(s.history, ev)
	for _, e := range []*endpoint{&s.ours, &s.theirs} {
		if e.open != nil {
			e.open.send(ev)
		}
	}
	return ev
}

// endWatches ends both open watches: with 410 Expired (the reflector must relist) or
// as a plain end of the stream (it may watch again from its last resourceVersion).
// What it did is written into each endpoint's requests.
func (s *cmServer) endWatches(expire bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range []*endpoint{&s.ours, &s.theirs} {
		switch {
		case e.open == nil:
			e.requests = append(e.requests, "(no watch open to end)")
		case expire:
			e.open.expire()
		default:
			e.open.end()
		}
		e.open = nil
	}
}

// list serves a LIST: every stored object, at the current resourceVersion. The
// requested resourceVersion is recorded, not honoured: the server is always fresh
// enough.
func (s *cmServer) list(e *endpoint, opts metav1.ListOptions) (names []string, rvs []int, rv int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range sortedStrings(mapKeys(s.objs)) {
		names = append(names, name)
		rvs = append(rvs, s.objs[name])
	}
	parts := make([]string, len(names))
	for i := range names {
		parts[i] = fmt.Sprintf("%s@%d", names[i], rvs[i])
	}
	e.requests = append(e.requests, fmt.Sprintf("LIST rv=%q → rv=%d [%s]", opts.ResourceVersion, s.rv, strings.Join(parts, " ")))
	return names, rvs, s.rv
}

// watch opens w as e's watch, after sending it every change since the requested
// resourceVersion (a watch from "" or "0" gets none: neither reflector asks for one
// when it lists first).
func (s *cmServer) watch(e *endpoint, opts metav1.ListOptions, w *serverWatch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.requests = append(e.requests, fmt.Sprintf("WATCH rv=%q", opts.ResourceVersion))
	if from, err := strconv.Atoi(opts.ResourceVersion); err == nil && from > 0 {
		for _, ev := range s.history {
			if ev.rv > from {
				w.send(ev)
			}
		}
	}
	e.open = w
}

// takeRequests returns e's requests since the last call.
func (s *cmServer) takeRequests(e *endpoint) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := e.requests
	e.requests = nil
	return r
}

func mapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
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
	names, rvs, rv := lw.s.list(lw.e, opts)
	items := make([]*corev1.ConfigMap, len(names))
	for i := range names {
		items[i] = configMap(names[i], rvs[i])
	}
	return reflector.ListResult[*corev1.ConfigMap]{Items: items, ResourceVersion: strconv.Itoa(rv)}, nil
}

func (lw oursLW) Watch(_ context.Context, opts metav1.ListOptions) (reflector.Watch[*corev1.ConfigMap], error) {
	w := newChanWatch[reflector.Event[*corev1.ConfigMap]]()
	lw.s.watch(lw.e, opts, &serverWatch{
		send: func(ev serverEvent) {
			w.push(reflector.Event[*corev1.ConfigMap]{Type: ev.typ, Object: configMap(ev.name, ev.rv)})
		},
		expire: func() {
			w.push(reflector.Event[*corev1.ConfigMap]{Type: watch.Error, Status: expiredStatus()})
			w.close()
		},
		end: w.close,
	})
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
	names, rvs, rv := lw.s.list(lw.e, opts)
	list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(rv)}}
	for i := range names {
		list.Items = append(list.Items, *configMap(names[i], rvs[i]))
	}
	return list, nil
}

func (lw clientGoLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

func (lw clientGoLW) WatchWithContext(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w := newChanWatch[watch.Event]()
	lw.s.watch(lw.e, opts, &serverWatch{
		send: func(ev serverEvent) { w.push(watch.Event{Type: ev.typ, Object: configMap(ev.name, ev.rv)}) },
		expire: func() {
			w.push(watch.Event{Type: watch.Error, Object: expiredStatus()})
			w.close()
		},
		end: w.close,
	})
	return w, nil
}

// IsWatchListSemanticsUnSupported makes client-go's reflector LIST first, as ours does
// with reflector.PagedList: the server here does not stream an initial state.
//
// client-go: util/watchlist/watch_list.go DoesClientNotSupportWatchListSemantics
func (clientGoLW) IsWatchListSemanticsUnSupported() bool { return true }
