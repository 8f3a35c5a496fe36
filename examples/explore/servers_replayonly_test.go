//go:build replayonly

package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// liveTestParts is empty in the replay-only build: there is no world to fake.
//
//lint:ignore U1000 embedded in testServer so that both builds share one struct; empty here
type liveTestParts struct{}

// startTestServer is, in the replay-only build, the server with no live parts and no
// recording, serving h (a hub of one informer, foos, if nil): the routes every build
// serves. local has no meaning here.
func startTestServer(t testing.TB, _ bool, h *hub) *testServer {
	t.Helper()
	ln, err := listenLoopback("127.0.0.1:0")
	require.NoError(t, err)
	if h == nil {
		h = testHub(64)
	}
	done := make(chan struct{})
	s, err := newServer(h, ln.Addr().String(), done)
	require.NoError(t, err)
	return serveForTest(t, s, ln, done)
}
