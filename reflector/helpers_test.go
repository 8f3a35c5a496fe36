package reflector

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

type cmT = *corev1.ConfigMap

// cm returns a ConfigMap named name in namespace "ns" at resource version rv.
func cm(name, rv string) cmT {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// bookmark returns the object of a Bookmark event at rv.
func bookmark(rv string) cmT {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
}

// initialEventsEnd returns the bookmark object that ends a watch-list's initial events.
func initialEventsEnd(rv string) cmT {
	b := bookmark(rv)
	b.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	return b
}

func added(o cmT) Event[cmT]    { return Event[cmT]{Type: watch.Added, Object: o} }
func modified(o cmT) Event[cmT] { return Event[cmT]{Type: watch.Modified, Object: o} }
func deleted(o cmT) Event[cmT]  { return Event[cmT]{Type: watch.Deleted, Object: o} }
func bookmarked(o cmT) Event[cmT] {
	return Event[cmT]{Type: watch.Bookmark, Object: o}
}
func errorEvent(err error) Event[cmT] {
	s := err.(apierrors.APIStatus).Status()
	return Event[cmT]{Type: watch.Error, Status: &s}
}

var cmResource = schema.GroupResource{Resource: "configmaps"}

func errExpired() error { return apierrors.NewResourceExpired("too old resource version") }

// errTooLargeRV is what the API server says when asked for an RV newer than it has
// seen (a 504 Timeout carrying the ResourceVersionTooLarge cause).
func errTooLargeRV() error {
	err := apierrors.NewTimeoutError("Too large resource version: 100, current: 50", 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
	return err
}
func errTooManyRequests() error { return apierrors.NewTooManyRequests("slow down", 1) }
func errInternal() error        { return apierrors.NewInternalError(fmt.Errorf("boom")) }

// step is one scripted answer of the fake API server, for one List or Watch call.
type step struct {
	verb string // "list" or "watch"
	err  error  // returned instead of a result

	// list
	items []cmT
	rv    string
	cont  string

	// watch
	events []Event[cmT]
	every  time.Duration // wait this long before each event
	after  time.Duration // after the last event, keep the stream open this long, then close it
	hold   bool          // after the last event, keep the stream open until stopped
}

func listStep(rv string, items ...cmT) step { return step{verb: "list", rv: rv, items: items} }
func listErr(err error) step                { return step{verb: "list", err: err} }
func watchErr(err error) step               { return step{verb: "watch", err: err} }
func watchHold(events ...Event[cmT]) step {
	return step{verb: "watch", events: events, hold: true}
}
func watchClose(after time.Duration, events ...Event[cmT]) step {
	return step{verb: "watch", events: events, after: after}
}

// call is one List or Watch call the fake received.
type call struct {
	verb string
	opts metav1.ListOptions
	at   time.Time
}

func (c call) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s rv=%q", c.verb, c.opts.ResourceVersion)
	if c.opts.Limit != 0 {
		fmt.Fprintf(&b, " limit=%d", c.opts.Limit)
	}
	if c.opts.Continue != "" {
		fmt.Fprintf(&b, " continue=%s", c.opts.Continue)
	}
	if c.opts.ResourceVersionMatch != "" {
		fmt.Fprintf(&b, " match=%s", c.opts.ResourceVersionMatch)
	}
	if c.opts.SendInitialEvents != nil && *c.opts.SendInitialEvents {
		b.WriteString(" sendInitialEvents")
	}
	return b.String()
}

// scriptedLW is a ListerWatcher that answers from a script and records every call.
// A script ends with watchHold: once that watch has delivered its events, exhausted
// is closed and the test inspects and cancels. A call beyond the script or of the
// wrong verb fails the test, blocks (a list until ctx ends, a watch until stopped)
// and closes exhausted too.
type scriptedLW struct {
	t         *testing.T
	lenient   bool // calls beyond the script block without failing the test
	exhausted chan struct{}
	once      sync.Once

	mu    sync.Mutex
	steps []step // guarded by mu
	calls []call // guarded by mu
}

func newScriptedLW(t *testing.T, steps ...step) *scriptedLW {
	return &scriptedLW{t: t, steps: steps, exhausted: make(chan struct{})}
}

func (f *scriptedLW) next(verb string, opts metav1.ListOptions) (s step, last, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call{verb: verb, opts: opts, at: time.Now()})
	if len(f.steps) == 0 && f.lenient {
		f.finish()
		return step{}, false, false
	}
	if len(f.steps) == 0 {
		f.t.Errorf("call %d (%s) is beyond the end of the script", len(f.calls), f.calls[len(f.calls)-1])
		f.finish()
		return step{}, false, false
	}
	s = f.steps[0]
	f.steps = f.steps[1:]
	if s.verb != verb {
		f.t.Errorf("call %d is a %s, but the script expects a %s", len(f.calls), verb, s.verb)
		f.finish()
		return step{}, false, false
	}
	return s, len(f.steps) == 0, true
}

// finish closes exhausted: the scripted part of the test is over.
func (f *scriptedLW) finish() { f.once.Do(func() { close(f.exhausted) }) }

// Calls returns the recorded calls as strings.
func (f *scriptedLW) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.calls))
	for i, c := range f.calls {
		out[i] = c.String()
	}
	return out
}

// RawCalls returns the recorded calls.
func (f *scriptedLW) RawCalls() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

func (f *scriptedLW) List(ctx context.Context, opts metav1.ListOptions) (ListResult[cmT], error) {
	s, last, ok := f.next("list", opts)
	if last && !f.lenient {
		f.t.Errorf("the script must end with watchHold, not a list")
		f.finish()
	}
	if !ok {
		<-ctx.Done()
		return ListResult[cmT]{}, ctx.Err()
	}
	if s.err != nil {
		return ListResult[cmT]{}, s.err
	}
	return ListResult[cmT]{Items: append([]cmT(nil), s.items...), ResourceVersion: s.rv, Continue: s.cont}, nil
}

func (f *scriptedLW) Watch(ctx context.Context, opts metav1.ListOptions) (Watch[cmT], error) {
	s, last, ok := f.next("watch", opts)
	if !ok {
		s = step{hold: true}
	}
	if last && !s.hold {
		f.t.Errorf("the script must end with watchHold")
		f.finish()
	}
	if s.err != nil {
		return nil, s.err
	}
	w := NewFakeWatch[cmT]()
	// Goroutine owned by the fake server: it plays the scripted events and exits
	// when they are sent and the stream is closed, or when the consumer stops it.
	go func() {
		for _, ev := range s.events {
			if s.every > 0 {
				t := time.NewTimer(s.every)
				select {
				case <-t.C:
				case <-w.Stopped():
					t.Stop()
					return
				}
			}
			if !w.Send(ev) {
				return
			}
		}
		switch {
		case s.hold:
			if last {
				f.finish()
			}
			<-w.Stopped()
		case s.after > 0:
			t := time.NewTimer(s.after)
			defer t.Stop()
			select {
			case <-t.C:
				w.Close()
			case <-w.Stopped():
			}
		default:
			w.Close()
		}
	}()
	return w, nil
}

// recordingStore records every call as a short string. It does not implement
// BookmarkStore; bookmarkingStore does.
type recordingStore struct {
	mu         sync.Mutex
	ops        []string // guarded by mu
	replaceErr error    // guarded by mu; returned by the next Replace, then cleared
	addErr     error    // guarded by mu; returned by every Add
	resyncErr  error    // guarded by mu; returned by every Resync
	resyncs    int      // guarded by mu
}

func (s *recordingStore) record(op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, op)
}

func (s *recordingStore) Add(o cmT) error {
	s.record("add " + o.Name + "@" + o.ResourceVersion)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addErr
}
func (s *recordingStore) Update(o cmT) error {
	s.record("update " + o.Name + "@" + o.ResourceVersion)
	return nil
}
func (s *recordingStore) Delete(o cmT) error {
	s.record("delete " + o.Name + "@" + o.ResourceVersion)
	return nil
}
func (s *recordingStore) Replace(items []cmT, rv string) error {
	names := make([]string, len(items))
	for i, o := range items {
		names[i] = o.Name
	}
	s.record(fmt.Sprintf("replace [%s] rv=%s", strings.Join(names, " "), rv))
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.replaceErr
	s.replaceErr = nil
	return err
}
func (s *recordingStore) Resync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resyncs++
	return s.resyncErr
}

func (s *recordingStore) Ops() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ops...)
}

func (s *recordingStore) Resyncs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resyncs
}

type bookmarkingStore struct{ recordingStore }

func (s *bookmarkingStore) Bookmark(rv string) error {
	s.record("bookmark rv=" + rv)
	return nil
}

// runUntilExhausted runs r until lw's script is exhausted, then cancels ctx and
// waits for Run to return. It must be called inside a synctest bubble, where
// backoffs and timeouts elapse instantly once every goroutine is blocked.
func runUntilExhausted(t *testing.T, r *Reflector[cmT], lw *scriptedLW) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	// Goroutine owned by this helper: Run, which exits when ctx is cancelled below.
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	<-lw.exhausted
	cancel()
	<-done
}
