package parity

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubeinternals/informers/reflector"
)

// The two reflectors TestReflector drives, each writing into a recordingStore: a store
// that keeps the objects and writes every call the reflector makes into its endpoint's
// log, between the requests, so one side's transcript shows requests and store calls
// in the order they happened.

// recordingStore is the state both sides' stores share; oursStore and clientGoStore
// adapt it to each library's store interface. It is guarded by the server's lock,
// which the log is too.
type recordingStore struct {
	s    *cmServer
	e    *endpoint
	objs map[string]string // name → name@rv
}

func newRecordingStore(s *cmServer, e *endpoint) *recordingStore {
	return &recordingStore{s: s, e: e, objs: map[string]string{}}
}

func (r *recordingStore) note(line string) { r.e.log = append(r.e.log, "  store."+line) }

func (r *recordingStore) apply(call string, obj any) error {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		r.note(fmt.Sprintf("%s(%T)", call, obj))
		return fmt.Errorf("not a ConfigMap: %T", obj)
	}
	if call == "Delete" {
		delete(r.objs, cm.Name)
	} else {
		r.objs[cm.Name] = describeQueued(cm)
	}
	r.note(fmt.Sprintf("%s(%s)", call, describeQueued(cm)))
	return nil
}

// replace records a Replace. After a watch-list its items are sorted: client-go's come
// from a temporary store's List, in map order; after a LIST both keep the list's order.
//
// client-go: tools/cache/reflector.go Reflector.watchList (temporaryStore.List)
func (r *recordingStore) replace(items []any, rv string) error {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.objs = map[string]string{}
	parts := make([]string, len(items))
	for i, obj := range items {
		parts[i] = describeQueued(obj)
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			r.objs[cm.Name] = parts[i]
		}
	}
	if r.e.watchListed {
		slices.Sort(parts)
	}
	r.note(fmt.Sprintf("Replace([%s], %q)", strings.Join(parts, " "), rv))
	return nil
}

func (r *recordingStore) resync() error {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.note("Resync()")
	return nil
}

func (r *recordingStore) bookmark(rv string) error {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.note(fmt.Sprintf("Bookmark(%q)", rv))
	return nil
}

// contents is the store's objects, sorted.
func (r *recordingStore) contents() string {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return "[" + strings.Join(sortedStrings(mapValues(r.objs)), " ") + "]"
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// oursStore is the recordingStore as our reflector's Store and BookmarkStore.
type oursStore struct{ *recordingStore }

var (
	_ reflector.Store[*corev1.ConfigMap] = oursStore{}
	_ reflector.BookmarkStore            = oursStore{}
)

func (o oursStore) Add(cm *corev1.ConfigMap) error    { return o.apply("Add", cm) }
func (o oursStore) Update(cm *corev1.ConfigMap) error { return o.apply("Update", cm) }
func (o oursStore) Delete(cm *corev1.ConfigMap) error { return o.apply("Delete", cm) }
func (o oursStore) Resync() error                     { return o.resync() }
func (o oursStore) Bookmark(rv string) error          { return o.bookmark(rv) }
func (o oursStore) Replace(items []*corev1.ConfigMap, rv string) error {
	list := make([]any, len(items))
	for i, cm := range items {
		list[i] = cm
	}
	return o.replace(list, rv)
}

// clientGoStore is the recordingStore as client-go's ReflectorStore and
// ReflectorBookmarkStore.
type clientGoStore struct{ *recordingStore }

var (
	_ cache.ReflectorStore         = clientGoStore{}
	_ cache.ReflectorBookmarkStore = clientGoStore{}
)

func (c clientGoStore) Add(obj any) error                    { return c.apply("Add", obj) }
func (c clientGoStore) Update(obj any) error                 { return c.apply("Update", obj) }
func (c clientGoStore) Delete(obj any) error                 { return c.apply("Delete", obj) }
func (c clientGoStore) Resync() error                        { return c.resync() }
func (c clientGoStore) Bookmark(rv string) error             { return c.bookmark(rv) }
func (c clientGoStore) Replace(items []any, rv string) error { return c.replace(items, rv) }

// clientGoWatchListLW is the server as client-go's ListerWatcher with watch-list on:
// unlike clientGoLW it does not declare watch-lists unsupported, so client-go's
// reflector (its WatchListClient gate on by default since 1.35) streams the state.
//
// client-go: tools/cache/reflector.go NewReflectorWithOptions (useWatchList)
type clientGoWatchListLW struct{ clientGoLW }

func (clientGoWatchListLW) IsWatchListSemanticsUnSupported() bool { return false }

// reflectorSide is one library's reflector, its store and its endpoint.
type reflectorSide struct {
	name  string
	end   *endpoint
	store *recordingStore
	// start builds the reflector and runs it until ctx ends; lastSync reads its
	// LastSyncResourceVersion once it is built.
	start    func(ctx context.Context)
	lastSync func() string
	done     chan struct{}
}

// reflectorMode is how both reflectors fetch the state.
type reflectorMode int

const (
	modeList      reflectorMode = iota // ours PagedList; client-go's ListerWatcher opts out of watch-lists
	modeWatchList                      // ours at its default (WatchList); client-go with watch-list on
)

func (m reflectorMode) String() string { return [...]string{"LIST then WATCH", "watch-list"}[m] }

// newOursReflectorSide builds our side; tweak, if given, changes its options (an
// exception's logger or error handler).
func newOursReflectorSide(srv *cmServer, mode reflectorMode, tweak ...func(*reflector.Options[*corev1.ConfigMap])) *reflectorSide {
	side := &reflectorSide{name: "ours", end: &srv.ours, store: newRecordingStore(srv, &srv.ours), lastSync: func() string { return "" }}
	opts := reflector.Options[*corev1.ConfigMap]{
		Logger: quiet,
		// Who hears why a cycle ended differs on purpose (an exception); not compared.
		WatchErrorHandler: func(context.Context, *reflector.Reflector[*corev1.ConfigMap], error) {},
	}
	if mode == modeList {
		opts.InitialList = reflector.PagedList
	}
	for _, f := range tweak {
		f(&opts)
	}
	side.start = func(ctx context.Context) {
		r, err := reflector.NewReflector[*corev1.ConfigMap](oursLW{srv, &srv.ours}, oursStore{side.store}, opts)
		if err != nil {
			panic(err)
		}
		side.lastSync = r.LastSyncResourceVersion
		go func() { defer close(side.done); r.Run(ctx) }()
	}
	return side
}

func newClientGoReflectorSide(srv *cmServer, mode reflectorMode) *reflectorSide {
	side := &reflectorSide{name: "client-go", end: &srv.theirs, store: newRecordingStore(srv, &srv.theirs), lastSync: func() string { return "" }}
	var lw cache.ListerWatcher = clientGoLW{srv, &srv.theirs}
	if mode == modeWatchList {
		lw = clientGoWatchListLW{clientGoLW{srv, &srv.theirs}}
	}
	side.start = func(ctx context.Context) {
		// Built when it starts, as an informer builds it: its backoff's sequence begins
		// when the reflector is made, ours when Run begins.
		r := cache.NewReflectorWithOptions(lw, &corev1.ConfigMap{}, clientGoStore{side.store}, cache.ReflectorOptions{Logger: &quietKlog})
		side.lastSync = r.LastSyncResourceVersion
		go func() { defer close(side.done); r.RunWithContext(klog.NewContext(ctx, quietKlog)) }()
	}
	return side
}
