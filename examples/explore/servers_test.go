package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// The servers the tests talk to. startTestServer has one body per build: a live
// explorer's server over fakes (fake_test.go), or, in the replay-only build, the
// server with no live parts (servers_replayonly_test.go). What every build shares is
// here.

// testServer is a server on a real loopback listener (so that Host and Origin are
// those a browser would send).
type testServer struct {
	*server
	URL  string
	done chan struct{}
	// liveTestParts are the fakes behind a live server; empty in the replay-only build.
	//lint:ignore U1000 empty, and so unused, in the replay-only build
	liveTestParts
}

// serveForTest serves s on ln until the test ends; closing done ends its streams.
func serveForTest(t testing.TB, s *server, ln net.Listener, done chan struct{}) *testServer {
	t.Helper()
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
	return &testServer{server: s, URL: hs.URL, done: done}
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

// message is the error a request was answered with: its {"error": …} body.
func message(t *testing.T, body string) string {
	t.Helper()
	var e struct{ Error string }
	require.NoError(t, json.Unmarshal([]byte(body), &e), body)
	require.NotEmpty(t, e.Error, "an error body says what was wrong: %s", body)
	return e.Error
}

// state is a running explorer's GET /state.
func (x *explorer) state(t *testing.T) snapshot {
	t.Helper()
	s, err := x.stateOrErr()
	require.NoError(t, err)
	return s
}

// stateOrErr is state for a caller that is not a test's goroutine, or polls.
func (x *explorer) stateOrErr() (snapshot, error) {
	resp, err := http.Get(x.URL + "state")
	if err != nil {
		return snapshot{}, err
	}
	defer resp.Body.Close()
	var s snapshot
	err = json.NewDecoder(resp.Body).Decode(&s)
	return s, err
}
