package testenv

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/rest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echoServer answers each line with the same line.
func echoServer(t *testing.T) string { return taggedServer(t, "") }

// taggedServer answers each line with tag and the line.
func taggedServer(t *testing.T, tag string) string {
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
					if _, err := c.Write([]byte(tag + line)); err != nil {
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

// ask sends one line and returns the answer without its newline.
func ask(c net.Conn, msg string) (string, error) {
	if _, err := c.Write([]byte(msg + "\n")); err != nil {
		return "", err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSuffix(got, "\n"), err
}

func TestProxySwitchCutsOpenConnectionsAndSendsNewOnesToTheNewTarget(t *testing.T) {
	a, b := taggedServer(t, "A:"), taggedServer(t, "B:")
	p, err := StartProxy(a)
	require.NoError(t, err)
	defer p.Close()

	c1, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c1.Close()
	got, err := ask(c1, "hello")
	require.NoError(t, err)
	assert.Equal(t, "A:hello", got)

	cut, err := p.Switch(b)
	require.NoError(t, err)
	assert.Equal(t, 1, cut, "the connection to A was cut")
	assert.Equal(t, strings.TrimPrefix(b, "https://"), p.Target())
	_, err = ask(c1, "still there?")
	assert.Error(t, err, "a connection to the old target does not survive the switch")

	c2, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c2.Close()
	got, err = ask(c2, "hello")
	require.NoError(t, err)
	assert.Equal(t, "B:hello", got, "the same address now reaches B")

	_, err = p.Switch("not a url")
	assert.Error(t, err)
	assert.Equal(t, strings.TrimPrefix(b, "https://"), p.Target(), "a bad target changes nothing")
}

// pipeProxy is a Proxy whose connections are in-memory pipes, for synctest: forward
// gets the proxy's end of a client pipe, and each dial hands the server's end of a new
// pipe to servers.
func pipeProxy(servers chan<- net.Conn) *Proxy {
	return newProxy("pipe", "server", func(string) (net.Conn, error) {
		proxyEnd, serverEnd := net.Pipe()
		servers <- serverEnd
		return proxyEnd, nil
	})
}

// reader collects what arrives on c, one read per element, until c closes.
func reader(c net.Conn) <-chan string {
	got := make(chan string, 16)
	go func() {
		defer close(got)
		buf := make([]byte, 64)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			got <- string(buf[:n])
		}
	}()
	return got
}

func TestProxyFreezeHoldsTheBytesOfEveryConnectionBothWaysUntilThaw(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		servers := make(chan net.Conn, 2)
		p := pipeProxy(servers)
		defer p.Close()
		client, proxyEnd := net.Pipe()
		defer client.Close()
		p.forward(proxyEnd)
		server := <-servers
		defer server.Close()
		atServer, atClient := reader(server), reader(client)

		p.Freeze()
		assert.True(t, p.Frozen())
		_, err := client.Write([]byte("request"))
		require.NoError(t, err, "the proxy still reads: the writer does not notice the freeze")
		_, err = server.Write([]byte("response"))
		require.NoError(t, err)
		synctest.Wait()
		assert.Empty(t, atServer, "frozen: nothing reaches the server")
		assert.Empty(t, atClient, "frozen: nothing reaches the client")

		p.Thaw()
		synctest.Wait()
		assert.False(t, p.Frozen())
		assert.Equal(t, "request", <-atServer, "thawed: the held bytes arrive")
		assert.Equal(t, "response", <-atClient)
	})
}

func TestProxyFreezeHoldsConnectionsAcceptedWhileFrozen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		servers := make(chan net.Conn, 1)
		p := pipeProxy(servers)
		defer p.Close()
		p.Freeze()
		p.Freeze() // freezing a frozen proxy does nothing

		client, proxyEnd := net.Pipe()
		defer client.Close()
		p.forward(proxyEnd)
		server := <-servers
		defer server.Close()
		atServer := reader(server)
		_, err := client.Write([]byte("late"))
		require.NoError(t, err)
		synctest.Wait()
		assert.Empty(t, atServer, "a new connection is accepted, and frozen")

		p.Thaw()
		p.Thaw() // thawing a thawed proxy does nothing
		synctest.Wait()
		assert.Equal(t, "late", <-atServer)
	})
}

func TestProxyCutAndCloseReleaseConnectionsHeldByAFreeze(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		servers := make(chan net.Conn, 2)
		p := pipeProxy(servers)
		p.Freeze()
		for range 2 {
			client, proxyEnd := net.Pipe()
			defer client.Close()
			p.forward(proxyEnd)
			server := <-servers
			defer server.Close()
			_, err := client.Write([]byte("held"))
			require.NoError(t, err)
		}
		synctest.Wait()
		assert.Equal(t, 2, p.Cut(), "both frozen connections are cut")
		// Close waits for every copier: it returns only if the freeze released them.
		p.Close()
	})
}

func TestProxyLimitClosesEachNewConnectionAtItsAgeAndPacesItsBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		servers := make(chan net.Conn, 2)
		p := pipeProxy(servers)
		defer p.Close()
		p.Limit(3*time.Second, 100) // 100 bytes a second, read 10 at a time
		t0 := time.Now()

		client, proxyEnd := net.Pipe()
		defer client.Close()
		p.forward(proxyEnd)
		server := <-servers
		defer server.Close()
		atClient := reader(client)
		// Goroutine owned by this test: the server's write blocks while the proxy paces.
		go func() { _, _ = server.Write([]byte(strings.Repeat("x", 150))) }()

		var got string
		var at []time.Duration
		for chunk := range atClient {
			got += chunk
			at = append(at, time.Since(t0))
		}
		assert.Equal(t, strings.Repeat("x", 150), got, "every byte arrives, 10 at a time, a tenth of a second apart")
		assert.Equal(t, 15, len(at))
		assert.Equal(t, 1400*time.Millisecond, at[14], "150 bytes at 100 bytes a second: the 15th chunk leaves at 1.4s")
		assert.Equal(t, 3*time.Second, time.Since(t0), "the connection was closed at its age, 3s")
	})
}
