package informer_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
	"github.com/kubeinternals/informers/reflector"
)

// pipeline is one of the informer's two pipelines: its queue and how it lists.
type pipeline struct {
	name  string
	queue informer.QueueKind
	list  reflector.InitialList
}

var (
	// defaults is what the zero Options give: client-go 1.37's RealFIFO fed by a
	// watch-list.
	defaults = pipeline{"RealFIFO+watch-list", informer.RealFIFOQueue, reflector.WatchList}
	// classic is DeltaFIFO fed by a paged LIST, chosen by name.
	classic = pipeline{"DeltaFIFO+LIST", informer.DeltaFIFOQueue, reflector.PagedList}
)

// pipelines: the shared informer suite runs every test on both pipelines.
var pipelines = []pipeline{classic, defaults}

func cm(name string, data ...string) *corev1.ConfigMap {
	c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: map[string]string{}}
	for i := 0; i+1 < len(data); i += 2 {
		c.Data[data[i]] = data[i+1]
	}
	return c
}

// event is one handler call as a recorder saw it.
type event struct {
	kind            string // add, update, delete
	name            string
	rv              string // of the new object (add, update) or the deleted one
	oldRV           string // update only
	isInInitialList bool
	tombstone       bool
}

func (e event) String() string {
	return fmt.Sprintf("%s %s@%s", e.kind, e.name, e.rv)
}

// recorder is a handler that records every call.
type recorder struct {
	mu     sync.Mutex
	events []event
}

func (r *recorder) OnAdd(obj *corev1.ConfigMap, isInInitialList bool) {
	r.append(event{kind: "add", name: obj.Name, rv: obj.ResourceVersion, isInInitialList: isInInitialList})
}

func (r *recorder) OnUpdate(old, obj *corev1.ConfigMap) {
	r.append(event{kind: "update", name: obj.Name, rv: obj.ResourceVersion, oldRV: old.ResourceVersion})
}

func (r *recorder) OnDelete(obj informer.DeletedObject[*corev1.ConfigMap]) {
	r.append(event{kind: "delete", name: obj.OptionalObj.Name, rv: obj.OptionalObj.ResourceVersion, tombstone: obj.FinalStateUnknown != nil})
}

func (r *recorder) append(e event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) get() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event(nil), r.events...)
}

// kinds returns "add name" strings for compact assertions.
func (r *recorder) summary() []string {
	var out []string
	for _, e := range r.get() {
		s := e.kind + " " + e.name
		if e.tombstone {
			s += " (tombstone)"
		}
		out = append(out, s)
	}
	return out
}

// running starts inf.Run in the background and returns a stop func that cancels it
// and waits until Run has returned.
func running[T indexer.Object](t *testing.T, inf *informer.SharedIndexInformer[T]) (context.Context, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.Run(ctx)
	}()
	stop := func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return ctx, stop
}

func newInformer(p pipeline, src *fakeapi.Server[*corev1.ConfigMap], opts informer.Options[*corev1.ConfigMap]) *informer.SharedIndexInformer[*corev1.ConfigMap] {
	opts.Queue, opts.InitialList = p.queue, p.list
	return informer.NewSharedIndexInformer[*corev1.ConfigMap](src, opts)
}

// logBuffer is a slog logger writing into a buffer tests can read.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// changeWhileDown takes src's watch down (lists and watches fail, open watches close),
// runs change, then brings it back and lets fake time pass any backoff: the informer
// sees the changes only through a relist. Call it inside a synctest bubble.
func changeWhileDown(src *fakeapi.Server[*corev1.ConfigMap], change func()) {
	outage := fakeapi.StatusError(500, "etcd is down")
	src.FailLists(outage)
	src.FailWatches(outage)
	src.CloseWatches()
	synctest.Wait()
	change()
	src.FailLists(nil)
	src.FailWatches(nil)
	time.Sleep(time.Minute) // fake time: past any backoff
	synctest.Wait()
}
