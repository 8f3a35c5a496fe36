//go:build !replayonly

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/trace"
)

// fakeWorld records the calls the buttons make; err, if set, is what every call
// returns. Without err it keeps which Foos exist, as the apiserver would: a create of
// one that exists gets 409, a delete of one that does not 404.
type fakeWorld struct {
	mu     sync.Mutex
	calls  []string
	err    error
	exists map[string]bool // Foos by name; guarded by mu
}

func (f *fakeWorld) record(format string, a ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, a...))
	return f.err
}

func (f *fakeWorld) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeWorld) CreateFoo(_ context.Context, name string, r int32) error {
	if err := f.record("CreateFoo %s %d", name, r); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.exists[name] {
		return apierrors.NewAlreadyExists(fooResource, name)
	}
	if f.exists == nil {
		f.exists = map[string]bool{}
	}
	f.exists[name] = true
	return nil
}
func (f *fakeWorld) TouchFoo(_ context.Context, name string) error {
	return f.record("TouchFoo %s", name)
}
func (f *fakeWorld) ScaleFoo(_ context.Context, name string, r int32) error {
	return f.record("ScaleFoo %s %d", name, r)
}
func (f *fakeWorld) DeleteFoo(_ context.Context, name string) error {
	if err := f.record("DeleteFoo %s", name); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.exists[name] {
		return apierrors.NewNotFound(fooResource, name)
	}
	delete(f.exists, name)
	return nil
}

// fooResource names Foos in the fake's errors, as the apiserver does.
var fooResource = schema.GroupResource{Group: "samplecontroller.k8s.io", Resource: "foos"}

// fakeRuns stands in for foo-controller in the runner. Each run, once started, reports
// through the hub what its pipeline's first moments look like — the Foo reflector's
// watch-list or LIST, a Replace in its queue — then counts as synced and waits for its
// end. It logs "start <pipeline>" and "end <pipeline>", and remembers how many runs
// were ever running at once.
type fakeRuns struct {
	hub *hub

	mu        sync.Mutex
	log       []string // guarded by mu
	running   int      // guarded by mu
	overlap   int      // most runs running at once; guarded by mu
	buildErr  error    // build fails with it when set; guarded by mu
	neverSync bool     // runs never count as synced; guarded by mu
	endErr    error    // what a run returns when its ctx ends; guarded by mu
}

func (f *fakeRuns) build(p controller.Pipeline) (*ctlRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.buildErr != nil {
		return nil, f.buildErr
	}
	synced := make(chan struct{})
	neverSync, endErr := f.neverSync, f.endErr
	return &ctlRun{pipeline: p, synced: []<-chan struct{}{synced}, body: func(ctx context.Context) error {
		f.note(+1, "start "+string(p))
		defer f.note(-1, "end "+string(p))
		queue, list := trace.DeltaFIFO, "list"
		if p == controller.DefaultPipeline {
			queue, list = trace.RealFIFO, "watch-list"
		}
		f.hub.Record(trace.Event{Stage: trace.Reflector, Kind: trace.ListStarted, Source: "foos", Type: list})
		f.hub.Record(trace.Event{Stage: trace.Reflector, Kind: trace.Listed, Source: "foos", Type: list, Items: 1, ResourceVersion: "7"})
		f.hub.Record(trace.Event{Stage: queue, Kind: trace.Replaced, Source: "foos", Items: 1, QueueLen: 1})
		if !neverSync {
			close(synced)
		}
		<-ctx.Done()
		return endErr
	}}, nil
}

// note logs what a run did, and counts the runs running.
func (f *fakeRuns) note(running int, what string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running += running
	f.overlap = max(f.overlap, f.running)
	f.log = append(f.log, what)
}

// Overlap is the most runs that were ever running at once.
func (f *fakeRuns) Overlap() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.overlap
}

// setBuildErr makes the next builds fail with err (nil: succeed).
func (f *fakeRuns) setBuildErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buildErr = err
}

// setNeverSync makes the next runs never count as synced.
func (f *fakeRuns) setNeverSync(v bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.neverSync = v
}

// Log is what the runs did so far.
func (f *fakeRuns) Log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

// newFakeRunner is a runner over fake runs recording into h; the test's cleanup stops
// it.
func newFakeRunner(t testing.TB, h *hub) (*runner, *fakeRuns) {
	t.Helper()
	runs := &fakeRuns{hub: h}
	r := newRunner(context.Background(), h, runs.build, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { require.NoError(t, r.stop()) })
	return r, runs
}
func (f *fakeWorld) ScaleDeployment(_ context.Context, name string, r int32) error {
	return f.record("ScaleDeployment %s %d", name, r)
}
func (f *fakeWorld) FailReconciles(_ context.Context, name string, n int) error {
	return f.record("FailReconciles %s %d", name, n)
}
func (f *fakeWorld) SlowHandler(h string, d time.Duration) { _ = f.record("SlowHandler %s %s", h, d) }
func (f *fakeWorld) CutWatch() (int, error)                { return 2, f.record("CutWatch") }
func (f *fakeWorld) CompactEtcd(context.Context) (int64, error) {
	return 42, f.record("CompactEtcd")
}
func (f *fakeWorld) RestartAPIServer(context.Context) error { return f.record("RestartAPIServer") }

// liveTestParts are a test server's fake world and fake controller runs; none in the
// replay-only build (servers_replayonly_test.go).
type liveTestParts struct {
	world *fakeWorld
	runs  *fakeRuns
}

// startTestServer is a live explorer's server over a fake world and fake controller
// runs, recording into h (a hub of one informer, foos, if nil). No run has begun: a
// test of the pipeline control calls ts.runner.begin.
func startTestServer(t testing.TB, local bool, h *hub) *testServer {
	t.Helper()
	ln, err := listenLoopback("127.0.0.1:0")
	require.NoError(t, err)
	if h == nil {
		h = testHub(64)
	}
	w := &fakeWorld{}
	r, runs := newFakeRunner(t, h)
	done := make(chan struct{})
	s, err := newLiveServer(h, w, r, ln.Addr().String(), local, done)
	require.NoError(t, err)
	ts := serveForTest(t, s, ln, done)
	ts.liveTestParts = liveTestParts{world: w, runs: runs}
	return ts
}

// post sends an action the way the page does, with changes applied to the request.
func (ts *testServer) post(t testing.TB, action, body string, change ...func(*http.Request)) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.URL+"/api/"+action, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", ts.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set(tokenHeader, ts.token)
	for _, c := range change {
		c(req)
	}
	return do(t, req)
}
