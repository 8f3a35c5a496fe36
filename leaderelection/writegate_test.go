package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// apiserver is the round tripper behind the gate in these tests: it answers every
// request at once with 200, except a path that ends in "/hang", which it holds until
// the request's context ends — a write in flight. It logs what reached it, and when.
type apiserver struct {
	t0 time.Time
	mu sync.Mutex
	// log is what happened, in order, as "<offset> <what>"; guarded by mu.
	log []string
}

func (s *apiserver) note(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, fmt.Sprintf("%v ", time.Since(s.t0))+fmt.Sprintf(format, args...))
}

func (s *apiserver) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

func (s *apiserver) RoundTrip(req *http.Request) (*http.Response, error) {
	s.note("server got %s %s", req.Method, req.URL.Path)
	if strings.HasSuffix(req.URL.Path, "/hang") {
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

// send makes one request through the gate and notes its outcome.
func send(s *apiserver, rt http.RoundTripper, method, path string) {
	req, err := http.NewRequestWithContext(context.Background(), method, "https://apiserver"+path, strings.NewReader("{}"))
	if err != nil {
		panic(err)
	}
	resp, err := rt.RoundTrip(req)
	switch {
	case errors.Is(err, ErrWriteGateClosed):
		s.note("%s %s: ErrWriteGateClosed", method, path)
	case err != nil:
		s.note("%s %s: %v", method, path, err)
	default:
		_ = resp.Body.Close()
		s.note("%s %s: %d", method, path, resp.StatusCode)
	}
}

// idleElector is an Elector that is never run: it never leads.
func idleElector(t *testing.T) *Elector {
	t.Helper()
	cfg := testConfig(newLeaseStore().lock("a"))
	cfg.Callbacks.OnStartedLeading = func(context.Context) {}
	e, err := New(cfg)
	require.NoError(t, err)
	return e
}

// leading runs candidate "a" on store until it leads, and returns the apiserver behind
// its gate, the candidate and the gate.
func leading(t *testing.T, t0 time.Time, store *leaseStore) (*apiserver, *candidate, http.RoundTripper) {
	s := &apiserver{t0: t0}
	a := run(t, t0, testConfig(store.lock("a")), 0, 0)
	gate := a.e.WriteGate()(s)
	synctest.Wait()
	return s, a, gate
}

func TestTheWriteGateIsClosedUntilTheCandidateLeads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &apiserver{t0: time.Now()}
		e := idleElector(t)
		gate := e.WriteGate()(s)

		for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace,
			http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, "PROPFIND"} {
			send(s, gate, method, "/x")
		}
		assert.Equal(t, []string{
			"0s server got GET /x", "0s GET /x: 200",
			"0s server got HEAD /x", "0s HEAD /x: 200",
			"0s server got OPTIONS /x", "0s OPTIONS /x: 200",
			"0s server got TRACE /x", "0s TRACE /x: 200",
			"0s POST /x: ErrWriteGateClosed",
			"0s PUT /x: ErrWriteGateClosed",
			"0s PATCH /x: ErrWriteGateClosed",
			"0s DELETE /x: ErrWriteGateClosed",
			"0s PROPFIND /x: ErrWriteGateClosed", // a method it does not know is a write
		}, s.lines(), "safe methods pass, every other method is refused without reaching the server")
		assert.False(t, e.WriteGateOpen())
	})
}

func TestTheWriteGateOpensWithTheLeaseAndALossClosesItCancellingAWriteInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, store := time.Now(), newLeaseStore()
		s, a, gate := leading(t, t0, store)
		send(s, gate, http.MethodPut, "/leading")

		time.Sleep(time.Second)
		go send(s, gate, http.MethodPut, "/hang")
		synctest.Wait()
		// a is cut off from the Lease (not from the server behind the gate): its round
		// at 2s fails until RenewDeadline, 12s (R4), before its own deadline (13.5s).
		store.partition("a", true)
		time.Sleep(11500 * time.Millisecond)
		send(s, gate, http.MethodPost, "/after")
		send(s, gate, http.MethodGet, "/after")
		a.stop()

		assert.Equal(t, []string{
			"0s server got PUT /leading", "0s PUT /leading: 200",
			"1s server got PUT /hang",
			"12s PUT /hang: ErrWriteGateClosed", // cancelled at the loss, R4
			"12.5s POST /after: ErrWriteGateClosed",
			"12.5s server got GET /after", "12.5s GET /after: 200",
		}, s.lines())
		_, _, _, _, err := a.snapshot()
		assert.ErrorIs(t, err, ErrLeaseLost)
	})
}

func TestTheWriteGateStaysOpenWhileTheWorkDrainsAndClosesBeforeTheRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, store := time.Now(), newLeaseStore()
		s := &apiserver{t0: t0}
		cfg := testConfig(store.lock("a"))
		cfg.ReleaseOnCancel = true
		var e atomic.Pointer[Elector]
		// Every write to the Lease notes whether the gate was open as it was sent.
		store.beforeUpdate = func() { s.note("lease update, gate open=%v", e.Load().WriteGateOpen()) }
		a := run(t, t0, cfg, 0, 4500*time.Millisecond)
		e.Store(a.e)
		gate := a.e.WriteGate()(s)

		time.Sleep(3 * time.Second)
		go a.stop() // S1: the work drains for 4.5s, the lease is renewed meanwhile
		time.Sleep(500 * time.Millisecond)
		send(s, gate, http.MethodPut, "/draining")
		go send(s, gate, http.MethodPut, "/hang") // left behind by the work
		<-a.done
		synctest.Wait()

		lines := s.lines()
		require.Len(t, lines, 9)
		assert.Equal(t, []string{
			"0s lease update, gate open=true", // R1 at once after the acquisition
			"2s lease update, gate open=true",
			"3.5s server got PUT /draining", "3.5s PUT /draining: 200",
			"3.5s server got PUT /hang",
			"4s lease update, gate open=true",
			"6s lease update, gate open=true",
		}, lines[:7], "writes pass while the work drains, and the lease is renewed")
		assert.ElementsMatch(t, []string{
			"7.5s PUT /hang: ErrWriteGateClosed", // the work returned: the term is over
			"7.5s lease update, gate open=false", // S2, the release, after the gate closed
		}, lines[7:])
		_, _, _, _, err := a.snapshot()
		assert.NoError(t, err)
		assert.Equal(t, 1, store.record().LeaseDurationSeconds, "released")
	})
}

func TestTheWriteGateFiresTheOwnDeadlineItselfWhenAPausedProcessWakesBeforeTheTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, store := time.Now(), newLeaseStore()
		s, a, gate := leading(t, t0, store)
		l := a.e.term.Load()
		require.NotNil(t, l)

		// A pause, as the process sees it on waking: the monotonic clock has moved past
		// the leader's own deadline, and the R6 timer has not run yet. The bubble's
		// clock cannot jump without running the timer, so the term's last send is moved
		// back instead.
		l.mu.Lock()
		l.lastSent = l.lastSent.Add(-a.e.leaderTerm())
		l.mu.Unlock()
		send(s, gate, http.MethodPut, "/woke")
		assert.Equal(t, []string{"0s PUT /woke: ErrWriteGateClosed"}, s.lines(), "no write leaves a leader past its own deadline")
		a.stop()
		_, _, _, _, err := a.snapshot()
		require.ErrorIs(t, err, ErrLeaseLost)
		assert.Contains(t, err.Error(), "(R6)")
		assert.Contains(t, err.Error(), "noticed by the write gate")
	})
}

func TestGatedCopiesTheConfigAndWrapsItsTransport(t *testing.T) {
	e := idleElector(t)
	restCfg := &rest.Config{Host: "https://apiserver"}
	gated := e.Gated(restCfg)
	assert.Nil(t, restCfg.WrapTransport, "the original config is left alone")
	require.NotNil(t, gated.WrapTransport)
	rt, ok := gated.WrapTransport(http.DefaultTransport).(*gatedTransport)
	require.True(t, ok, "the gate wraps the client's transport")
	assert.Same(t, e, rt.e)
}

func TestARESTClientsWriteThroughAClosedGateFailsWithErrWriteGateClosed(t *testing.T) {
	var reached atomic.Int32
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
	}))
	defer server.Close()
	e := idleElector(t)
	restCfg := e.Gated(&rest.Config{Host: server.URL, ContentConfig: rest.ContentConfig{
		GroupVersion: &schema.GroupVersion{Version: "v1"}, NegotiatedSerializer: serializer.NewCodecFactory(runtime.NewScheme()).WithoutConversion()}})
	restCfg.APIPath = "/api"
	client, err := rest.RESTClientFor(restCfg)
	require.NoError(t, err)

	err = client.Post().Resource("configmaps").Namespace("ns").Body([]byte("{}")).Do(t.Context()).Error()
	require.ErrorIs(t, err, ErrWriteGateClosed, "the rest client's error keeps the gate's sentinel")
	assert.Zero(t, reached.Load(), "the write never reached the server")
	require.NoError(t, client.Get().Resource("configmaps").Namespace("ns").Do(t.Context()).Error())
	assert.EqualValues(t, 1, reached.Load(), "a read passes")
}

// TestAWriteAdmittedAsTheTermEndsIsRefusedNotSent pins the check-then-act window: the
// term ends (R4 here, any end alike) after the gate's first check admitted a write and
// before its cancellation was registered. The write must not reach the server.
func TestAWriteAdmittedAsTheTermEndsIsRefusedNotSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, store := time.Now(), newLeaseStore()
		s, a, _ := leading(t, t0, store)
		l := a.e.term.Load()
		require.NotNil(t, l)
		gate := &gatedTransport{e: a.e, next: s, admitted: func() {
			l.lose("R4", "the test ends the term inside the window")
		}}
		send(s, gate, http.MethodPut, "/window")
		synctest.Wait()
		a.stop()
		assert.Equal(t, []string{"0s PUT /window: ErrWriteGateClosed"}, s.lines(),
			"the write admitted as the term ended never reached the server")
	})
}
