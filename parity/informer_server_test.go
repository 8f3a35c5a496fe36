package parity

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
)

// The API server TestInformer and TestReflector play for both libraries: one store of
// ConfigMaps (in namespace "ns") with a resourceVersion counter and the history of every
// change, and one endpoint per library — its LIST and WATCH requests, and the watch it
// has open. Both libraries read the same state, so they are told the same story; each
// endpoint records the requests its reflector made, with every option either sets and
// the server's answer, so the transcripts show when a side listed or watched, how and
// from where. TestReflector also pages LISTs, serves or refuses watch-lists, and arms
// failures for the next matching requests (reflector_faults_test.go).

// serverEvent is one change: the object's name and the resourceVersion the change
// gave it (a DELETED event carries the deletion's resourceVersion, as the API server's
// does). A BOOKMARK has no name; initialEnd marks the one that ends a watch-list's
// initial events.
type serverEvent struct {
	typ        watch.EventType
	name       string
	rv         int
	initialEnd bool
}

// endpoint is one library's connection to the server.
type endpoint struct {
	// log holds the requests since the last observation, each with the server's
	// answer, and in TestReflector the store's calls between them (recordingStore).
	log  []string
	open *serverWatch
	// faults are the answers armed for the next matching requests (TestReflector).
	faults []serverFault
	// last is when the server last acted on this endpoint: answered a request or
	// ended its watch. The wait before the next request is measured from it.
	last time.Time
	// watchListed: the last request was a watch-list.
	watchListed bool
}

// serverWatch is how the server reaches one open watch, whatever its event type.
type serverWatch struct {
	send      func(serverEvent)
	fail      func(*metav1.Status) // an ERROR event with this status, then the end of the stream
	end       func()               // the end of the stream, without an error
	bookmarks bool                 // the request allowed bookmarks
}

type cmServer struct {
	mu      sync.Mutex
	rv      int
	objs    map[string]int // name → resourceVersion of the stored object
	history []serverEvent
	ours    endpoint
	theirs  endpoint

	// How the server serves, set before the reflectors start; TestInformer leaves
	// them zero: every LIST in one page, no watch-list, no waits written.
	//
	// pageCap is the most objects a LIST page holds, whatever limit was asked (0: the
	// limit alone). Why a cap below the clients' 500: it makes a few objects span pages.
	pageCap int
	// watchCache: a LIST at RV "0" ignores its limit, as the API server's watch cache does.
	watchCache bool
	// watchList: a watch with sendInitialEvents=true is served (ADDED for every object,
	// then the end bookmark); otherwise it is refused with 422 Invalid, as by a server
	// without the WatchList feature.
	watchList bool
	// timed: each request's line says how long the reflector waited before it.
	timed bool
	// listOrder, when set, is the order in which a LIST answer names the objects
	// (TestInformer draws one per input, so that no library's reordering of a list
	// goes unseen); a name it leaves out comes after, by name. Unset: by name.
	listOrder []string
}

func newCMServer() *cmServer { return &cmServer{objs: map[string]int{}} }

// write creates or updates name at the next resourceVersion and sends the event to
// every open watch.
func (s *cmServer) write(name string) serverEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeLocked(name)
}

func (s *cmServer) writeLocked(name string) serverEvent {
	typ := watch.Added
	if _, ok := s.objs[name]; ok {
		typ = watch.Modified
	}
	s.rv++
	s.objs[name] = s.rv
	return s.publish(serverEvent{typ: typ, name: name, rv: s.rv})
}

// remove deletes name if it exists; ok is false when there was nothing to delete.
func (s *cmServer) remove(name string) (ev serverEvent, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.removeLocked(name)
}

func (s *cmServer) removeLocked(name string) (ev serverEvent, ok bool) {
	if _, ok := s.objs[name]; !ok {
		return serverEvent{}, false
	}
	s.rv++
	delete(s.objs, name)
	return s.publish(serverEvent{typ: watch.Deleted, name: name, rv: s.rv}), true
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

// bookmark sends a BOOKMARK at the current resourceVersion to every open watch that
// allowed bookmarks.
func (s *cmServer) bookmark() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range []*endpoint{&s.ours, &s.theirs} {
		switch {
		case e.open == nil:
			e.log = append(e.log, "(no watch open for a bookmark)")
		case !e.open.bookmarks:
			e.log = append(e.log, "(the watch did not allow bookmarks)")
		default:
			e.open.send(serverEvent{typ: watch.Bookmark, rv: s.rv})
		}
	}
}

// endWatches ends both open watches: with 410 Expired (the reflector must relist) or
// as a plain end of the stream (it may watch again from its last resourceVersion);
// then it makes changes, as failWatches does.
func (s *cmServer) endWatches(expire bool, changes ...infChange) {
	var st *metav1.Status
	if expire {
		st = expiredStatus()
	}
	s.failWatches(st, changes...)
}

// failWatches ends both open watches with an ERROR event of status st, or plainly if
// st is nil (where no watch is open, that is written into the endpoint's log), and
// then makes changes (each deleted when del says so, else written) — all under the
// server's lock: no request of either reflector, a re-watch or a relist, comes between
// the end and the changes, however goroutines are scheduled, so both see the changes
// as made while no watch was open.
func (s *cmServer) failWatches(st *metav1.Status, changes ...infChange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failWatchesLocked(st)
	for _, c := range changes {
		if c.del {
			s.removeLocked(c.name)
		} else {
			s.writeLocked(c.name)
		}
	}
}

func (s *cmServer) failWatchesLocked(st *metav1.Status) {
	for _, e := range []*endpoint{&s.ours, &s.theirs} {
		switch {
		case e.open == nil:
			e.log = append(e.log, "(no watch open to end)")
			continue
		case st != nil:
			e.open.fail(st)
		default:
			e.open.end()
		}
		e.open = nil
		e.last = time.Now()
	}
}

// startClock marks now as both endpoints' last action: the reflectors start, and the
// wait before each one's first request is measured from here.
func (s *cmServer) startClock() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ours.last, s.theirs.last = time.Now(), time.Now()
}

// stateAt returns every object as it was at resourceVersion rv, replayed from the
// history: what a continue token, which pins the first page's resourceVersion, lists.
func (s *cmServer) stateAt(rv int) map[string]int {
	objs := map[string]int{}
	for _, ev := range s.history {
		if ev.rv > rv {
			break
		}
		if ev.typ == watch.Deleted {
			delete(objs, ev.name)
		} else {
			objs[ev.name] = ev.rv
		}
	}
	return objs
}

// listPage is one LIST answer: objects by name, the list's resourceVersion, and the
// continue token of the next page ("" on the last).
type listPage struct {
	names []string
	rvs   []int
	rv    int
	cont  string
}

// list serves a LIST: the stored objects in listOrder (by name without one), at the current
// resourceVersion, or from a continue token at the first page's. The requested
// resourceVersion is recorded, not honoured: the server is always fresh enough. A
// limit is honoured (capped by pageCap), except at RV "0" with the watch cache on.
func (s *cmServer) list(e *endpoint, opts metav1.ListOptions) (listPage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	line := s.requestLine(e, "LIST", opts)
	kind := faultList
	if opts.Continue != "" {
		kind = faultContinue
	}
	if f, ok := e.takeFault(kind); ok {
		e.log = append(e.log, line+" → "+f.answer())
		return listPage{}, f.err()
	}
	page := listPage{rv: s.rv}
	objs, offset := s.objs, 0
	if opts.Continue != "" {
		if _, err := fmt.Sscanf(opts.Continue, "%d/%d", &page.rv, &offset); err != nil {
			e.log = append(e.log, line+" → 400 bad continue token")
			return listPage{}, apierrors.NewBadRequest("bad continue token")
		}
		objs = s.stateAt(page.rv)
	}
	names := s.listed(objs)
	limit := int(opts.Limit)
	if s.watchCache && opts.ResourceVersion == "0" && opts.Continue == "" {
		limit = 0
	}
	if limit > 0 && s.pageCap > 0 {
		limit = min(limit, s.pageCap)
	}
	end := len(names)
	if limit > 0 && offset+limit < end {
		end = offset + limit
		page.cont = fmt.Sprintf("%d/%d", page.rv, end)
	}
	names = names[min(offset, end):end]
	parts := make([]string, len(names))
	for i, name := range names {
		page.names = append(page.names, name)
		page.rvs = append(page.rvs, objs[name])
		parts[i] = fmt.Sprintf("%s@%d", name, objs[name])
	}
	answer := fmt.Sprintf("%s → rv=%d [%s]", line, page.rv, strings.Join(parts, " "))
	if page.cont != "" {
		answer += fmt.Sprintf(" continue=%q", page.cont)
	}
	e.log = append(e.log, answer)
	return page, nil
}

// listed returns the names of objs in the order a LIST answer gives them: listOrder's,
// then by name.
func (s *cmServer) listed(objs map[string]int) []string {
	names := sortedStrings(mapKeys(objs))
	rank := func(name string) int {
		if i := slices.Index(s.listOrder, name); i >= 0 {
			return i
		}
		return len(s.listOrder)
	}
	slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(rank(a), rank(b)) })
	return names
}

// watch opens w as e's watch. A plain watch is first sent every change since the
// requested resourceVersion (a watch from "" or "0" gets none: neither reflector asks
// for one when it lists first); a watch-list (sendInitialEvents=true) is sent an ADDED
// for every object, then the bookmark that ends the initial events, or refused.
func (s *cmServer) watch(e *endpoint, opts metav1.ListOptions, w *serverWatch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	line := s.requestLine(e, "WATCH", opts)
	initial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	e.watchListed = initial
	kind := faultWatch
	if initial {
		kind = faultWatchList
	}
	if f, ok := e.takeFault(kind); ok {
		e.log = append(e.log, line+" → "+f.answer())
		if f == watchListCut {
			if len(s.objs) > 0 {
				first := sortedStrings(mapKeys(s.objs))[0]
				w.send(serverEvent{typ: watch.Added, name: first, rv: s.objs[first]})
			}
			w.end()
			return nil
		}
		return f.err()
	}
	w.bookmarks = opts.AllowWatchBookmarks
	switch {
	case initial && !s.watchList:
		e.log = append(e.log, line+" → 422 Invalid: sendInitialEvents is forbidden")
		return apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "",
			field.ErrorList{field.Forbidden(field.NewPath("sendInitialEvents"), "the WatchList feature is off")})
	case initial:
		names := sortedStrings(mapKeys(s.objs))
		for _, name := range names {
			w.send(serverEvent{typ: watch.Added, name: name, rv: s.objs[name]})
		}
		w.send(serverEvent{typ: watch.Bookmark, rv: s.rv, initialEnd: true})
		line += fmt.Sprintf(" → %d initial events, end bookmark at rv=%d", len(names), s.rv)
	default:
		if from, err := strconv.Atoi(opts.ResourceVersion); err == nil && from > 0 {
			for _, ev := range s.history {
				if ev.rv > from {
					w.send(ev)
				}
			}
		}
	}
	e.log = append(e.log, line)
	e.open = w
	return nil
}

// requestLine describes a request: every field of its ListOptions either reflector
// sets, and, on a timed server, the wait before it. It marks the server's answer as
// e's last action.
func (s *cmServer) requestLine(e *endpoint, verb string, opts metav1.ListOptions) string {
	parts := []string{verb, fmt.Sprintf("rv=%q", opts.ResourceVersion)}
	if opts.ResourceVersionMatch != "" {
		parts = append(parts, "match="+string(opts.ResourceVersionMatch))
	}
	if opts.Limit != 0 {
		parts = append(parts, fmt.Sprintf("limit=%d", opts.Limit))
	}
	if opts.Continue != "" {
		parts = append(parts, fmt.Sprintf("continue=%q", opts.Continue))
	}
	if opts.SendInitialEvents != nil {
		parts = append(parts, fmt.Sprintf("sendInitialEvents=%v", *opts.SendInitialEvents))
	}
	if opts.AllowWatchBookmarks {
		parts = append(parts, "bookmarks")
	}
	if t := opts.TimeoutSeconds; t != nil {
		parts = append(parts, describeWatchTimeout(*t))
	}
	now := time.Now()
	if s.timed {
		parts = append(parts, "("+describeWait(now.Sub(e.last))+")")
	}
	e.last = now
	return strings.Join(parts, " ")
}

// describeWatchTimeout says whether a watch's timeoutSeconds lies in [5m, 10m), the
// range both reflectors draw it from at random; only a value outside it is written.
//
// client-go: tools/cache/reflector.go Reflector.watch (minWatchTimeout, maxWatchTimeout)
func describeWatchTimeout(t int64) string {
	if t >= 5*60 && t < 10*60 {
		return "timeout∈[5m,10m)"
	}
	return fmt.Sprintf("timeout=%ds", t)
}

// takeRequests returns e's log since the last call.
func (s *cmServer) takeRequests(e *endpoint) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := e.log
	e.log = nil
	return r
}
