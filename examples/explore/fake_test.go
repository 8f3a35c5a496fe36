package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeWorld records the calls the buttons make; err, if set, is what every call
// returns.
type fakeWorld struct {
	mu    sync.Mutex
	calls []string
	err   error
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
	return f.record("CreateFoo %s %d", name, r)
}
func (f *fakeWorld) TouchFoo(_ context.Context, name string) error {
	return f.record("TouchFoo %s", name)
}
func (f *fakeWorld) ScaleFoo(_ context.Context, name string, r int32) error {
	return f.record("ScaleFoo %s %d", name, r)
}
func (f *fakeWorld) DeleteFoo(_ context.Context, name string) error {
	return f.record("DeleteFoo %s", name)
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

// testServer is a server on a real loopback listener (so that Host and Origin are
// those a browser would send), over a fake world.
type testServer struct {
	*server
	URL   string
	world *fakeWorld
	done  chan struct{}
}

func startTestServer(t testing.TB, local bool, h *hub) *testServer {
	t.Helper()
	ln, err := listenLoopback("127.0.0.1:0")
	require.NoError(t, err)
	if h == nil {
		h = newHub(layout{Informers: []string{"foos"}, Handlers: []string{"enqueueFoo"}, HandlerOf: map[string]string{"enqueueFoo": "foos"}, Workers: 2}, 64, nil)
	}
	w := &fakeWorld{}
	done := make(chan struct{})
	s, err := newServer(h, w, ln.Addr().String(), local, done)
	require.NoError(t, err)
	hs := &httptest.Server{Listener: ln, Config: &http.Server{Handler: s.handler()}}
	hs.Start()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			close(done)
		}
		hs.Close()
	})
	return &testServer{server: s, URL: hs.URL, world: w, done: done}
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

func do(t testing.TB, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}
