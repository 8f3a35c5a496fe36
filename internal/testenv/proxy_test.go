package testenv

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echoServer answers each line with the same line.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return "https://" + ln.Addr().String()
}

func roundTrip(t *testing.T, c net.Conn, msg string) error {
	t.Helper()
	if _, err := c.Write([]byte(msg + "\n")); err != nil {
		return err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err == nil {
		assert.Equal(t, msg+"\n", got)
	}
	return err
}

func TestProxyForwardsCutsRefusesAndAcceptsAgain(t *testing.T) {
	p, err := StartProxy(echoServer(t))
	require.NoError(t, err)
	defer p.Close()

	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, roundTrip(t, c, "hello"), "bytes pass through both ways")
	assert.Equal(t, 1, p.Accepted())

	assert.Equal(t, 1, p.Cut(), "one client connection was open")
	assert.Error(t, roundTrip(t, c, "after the cut"), "a cut connection is closed")

	c2, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err, "after a cut, new connections are accepted")
	defer c2.Close()
	require.NoError(t, roundTrip(t, c2, "again"))

	assert.Equal(t, 1, p.Refuse())
	_, err = net.Dial("tcp", p.Addr())
	require.ErrorIs(t, err, syscall.ECONNREFUSED, "while refusing, the port is closed")

	require.NoError(t, p.Accept())
	c3, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err, "after Accept the same address works again")
	defer c3.Close()
	require.NoError(t, roundTrip(t, c3, "back"))
	assert.Equal(t, 3, p.Accepted())
}

func TestProxyRejectsATargetWithoutAHost(t *testing.T) {
	_, err := StartProxy("not a url")
	require.Error(t, err)
}

func TestProxyConfigSendsRequestsThroughTheProxy(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer srv.Close()
	p, err := StartProxy(srv.URL)
	require.NoError(t, err)
	defer p.Close()

	cfg := p.Config(&rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
	assert.Equal(t, "https://"+p.Addr(), cfg.Host)
	client, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	resp, err := client.Get(cfg.Host + "/")
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 1, p.Accepted(), "the request went through the proxy")
}
