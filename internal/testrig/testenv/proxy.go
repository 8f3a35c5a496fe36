package testenv

import (
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// Proxy is a TCP proxy on loopback in front of a server — kube-apiserver, or etcd as
// seen by a second apiserver. A client configured through it (Proxy.Config) talks to
// the real server — TLS passes through untouched — while a test injects the network's
// faults:
//
//   - Cut closes every open connection (a network failure);
//   - Refuse, then Accept, makes the server unreachable for a while;
//   - Switch sends new connections to another server and cuts the open ones, as a
//     load balancer in front of several apiservers fails over;
//   - Freeze stops forwarding bytes, both ways, on every connection, open or new,
//     until Thaw: the server is neither gone nor answering (a partition);
//   - Limit closes each new connection a fixed time after it opened and slows every
//     connection to a byte rate, as a load balancer with a maximum connection age in
//     front of a slow link does.
//
// Goroutines: one accept loop while listening, and two copiers per connection; all
// end when Close returns.
type Proxy struct {
	addr string                                // host:port we listen on, kept across Refuse/Accept
	dial func(target string) (net.Conn, error) // net.Dial("tcp", …); tests give net.Pipe

	mu      sync.Mutex         // guards every field below
	target  string             // host:port new connections go to; guarded by mu
	ln      net.Listener       // nil while refusing; guarded by mu
	links   map[*link]struct{} // every open connection; guarded by mu
	closed  bool               // guarded by mu
	counted int                // client connections accepted so far; guarded by mu
	// thawed is closed while the proxy forwards, open while it is frozen: a copier
	// holding bytes waits on it. Freeze replaces a closed one; Thaw closes it.
	// Guarded by mu.
	thawed chan struct{}
	// closing is closed by Close: it releases copiers waiting for a thaw.
	closing chan struct{}
	// maxAge, if > 0, is how long a connection accepted from now on stays open;
	// rate, if > 0, caps each direction of each connection at that many bytes a
	// second. Set by Limit; guarded by mu.
	maxAge time.Duration
	rate   int

	wg sync.WaitGroup // the accept loop and the copiers
}

// link is one client connection and its connection to the server.
type link struct {
	client, server net.Conn
	once           sync.Once
	done           chan struct{} // closed by close: releases a copier waiting for a thaw
}

// close closes both ends; the first call wins.
func (l *link) close() {
	l.once.Do(func() {
		_ = l.client.Close()
		_ = l.server.Close()
		close(l.done)
	})
}

// StartProxy listens on a free loopback port and forwards every connection to the
// host:port of targetURL (e.g. Env.Config.Host, or an etcd client URL).
func StartProxy(targetURL string) (*Proxy, error) {
	target, err := hostOf(targetURL)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	p := newProxy(ln.Addr().String(), target, func(t string) (net.Conn, error) { return net.Dial("tcp", t) })
	p.serve(ln)
	return p, nil
}

// newProxy is a Proxy that is not listening yet.
func newProxy(addr, target string, dial func(string) (net.Conn, error)) *Proxy {
	thawed := make(chan struct{})
	close(thawed)
	return &Proxy{addr: addr, dial: dial, target: target, links: map[*link]struct{}{}, thawed: thawed, closing: make(chan struct{})}
}

// hostOf is the host:port of a URL.
func hostOf(targetURL string) (string, error) {
	u, err := url.Parse(targetURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("proxy: target %q is not a URL with a host: %v", targetURL, err)
	}
	return u.Host, nil
}

// Config returns a copy of cfg whose requests go through the proxy. The apiserver's
// certificate is for 127.0.0.1, which the proxy's address shares.
func (p *Proxy) Config(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Host = "https://" + p.addr
	return c
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.addr }

// Target is the host:port new connections are forwarded to.
func (p *Proxy) Target() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.target
}

// Accepted counts the client connections the proxy has accepted so far.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counted
}

// Cut closes every connection open through the proxy, as a network failure would;
// it returns how many client connections it cut. New connections are still accepted.
func (p *Proxy) Cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cutLocked()
}

func (p *Proxy) cutLocked() int {
	n := len(p.links)
	for l := range p.links {
		l.close()
	}
	clear(p.links)
	return n
}

// Switch makes new connections go to the host:port of targetURL and cuts every open
// one, as a load balancer does when it fails over from one apiserver to another: a
// client's next request — its re-watch, say — reaches the new server. It returns how
// many client connections it cut.
//
// Why cut: a connection is a byte stream to one server (TLS, HTTP/2); it cannot be
// moved, only ended, and a client reconnects.
func (p *Proxy) Switch(targetURL string) (int, error) {
	target, err := hostOf(targetURL)
	if err != nil {
		return 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = target
	return p.cutLocked(), nil
}

// Freeze stops forwarding: bytes that arrive on any connection, open now or
// accepted later, are held (and the rest wait in the kernel's buffers) until Thaw.
// Connections stay open, so neither side sees an error — only silence, until its own
// timeouts (an HTTP/2 or gRPC keepalive, a request deadline) give up. Freezing a
// frozen proxy does nothing.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.thawed:
		p.thawed = make(chan struct{})
	default: // already frozen
	}
}

// Thaw forwards again, first the bytes held while frozen, in order. Thawing a proxy
// that is not frozen does nothing.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.thawed:
	default:
		close(p.thawed)
	}
}

// Frozen reports whether the proxy holds bytes instead of forwarding them.
func (p *Proxy) Frozen() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.thawed:
		return false
	default:
		return true
	}
}

// Limit makes every connection accepted from now on close maxAge after it opened (0:
// never), and caps every connection, open or new, at bytesPerSecond in each direction
// (0: no cap). A long response — a watch, or a watch-list still streaming its initial
// events — is cut at maxAge; short requests on fresh connections get through.
//
// Pitfall: with HTTP/2 every request of a client shares one connection, so maxAge cuts
// them all together; a client that should see one connection per request needs
// HTTP/1.1 without keep-alives.
func (p *Proxy) Limit(maxAge time.Duration, bytesPerSecond int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.maxAge, p.rate = maxAge, bytesPerSecond
}

// limits returns Limit's settings.
func (p *Proxy) limits() (time.Duration, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.maxAge, p.rate
}

// Refuse cuts every connection and stops listening: until Accept, a client gets
// "connection refused", as when the apiserver is down. It returns how many client
// connections it cut.
func (p *Proxy) Refuse() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	return p.cutLocked()
}

// Accept listens again, on the same address, after Refuse.
func (p *Proxy) Accept() error {
	p.mu.Lock()
	if p.closed || p.ln != nil {
		p.mu.Unlock()
		return nil
	}
	p.mu.Unlock()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return fmt.Errorf("proxy: listening again on %s: %w", p.addr, err)
	}
	p.serve(ln)
	return nil
}

// Close stops the proxy and waits for its goroutines. It is idempotent.
func (p *Proxy) Close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.closing)
	}
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	p.cutLocked()
	p.mu.Unlock()
	p.wg.Wait()
}

// serve makes ln the listener and starts its accept loop.
func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = ln.Close()
		return
	}
	p.ln = ln
	p.wg.Add(1)
	// Owner: the Proxy. Exits when ln is closed (Refuse or Close).
	go func() {
		defer p.wg.Done()
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			p.forward(client)
		}
	}()
}

// forward connects client to the current target and copies both ways until either
// side closes, or Cut, Switch or Close closes both.
func (p *Proxy) forward(client net.Conn) {
	server, err := p.dial(p.Target())
	if err != nil {
		_ = client.Close()
		return
	}
	l := &link{client: client, server: server, done: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.close()
		return
	}
	p.links[l] = struct{}{}
	p.counted++
	p.mu.Unlock()

	var ends sync.Once
	end := func() {
		l.close()
		p.mu.Lock()
		delete(p.links, l)
		p.mu.Unlock()
	}
	var aged *time.Timer // set before the copiers start; only they read it
	if maxAge, _ := p.limits(); maxAge > 0 {
		aged = time.AfterFunc(maxAge, func() { ends.Do(end) })
	}
	p.wg.Add(2)
	// Owner: the Proxy. Each copier exits when its source closes; the first to end
	// closes both connections, which ends the other. A copier waiting for a thaw
	// exits when its link is closed (Cut, Switch, Limit's age) or the proxy is (Close).
	for _, pair := range [][2]net.Conn{{server, client}, {client, server}} {
		go func() {
			defer p.wg.Done()
			p.copy(pair[0], pair[1], l.done)
			ends.Do(end)
			if aged != nil {
				aged.Stop() // a connection that ended early leaves no timer behind
			}
		}()
	}
}

// copy forwards src to dst until either fails or done is closed, holding each chunk
// read while the proxy is frozen until it thaws.
func (p *Proxy) copy(dst, src net.Conn, done <-chan struct{}) {
	buf := make([]byte, 32<<10)
	for {
		chunk := buf
		_, rate := p.limits()
		if rate > 0 {
			// Small chunks, a tenth of a second's worth, keep a capped stream smooth.
			chunk = buf[:max(1, min(len(buf), rate/10))]
		}
		n, err := src.Read(chunk)
		if n > 0 {
			if !p.waitThawed(done) {
				return
			}
			if _, werr := dst.Write(chunk[:n]); werr != nil {
				return
			}
			if rate > 0 && !p.pace(n, rate, done) {
				return
			}
		}
		if err != nil {
			return // EOF, a cut or a close alike
		}
	}
}

// pace waits as long as n bytes take at rate bytes a second; false means the link or
// the proxy was closed meanwhile.
func (p *Proxy) pace(n, rate int, done <-chan struct{}) bool {
	t := time.NewTimer(time.Duration(float64(n) / float64(rate) * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	case <-p.closing:
		return false
	}
}

// waitThawed blocks while the proxy is frozen; false means the link or the proxy
// was closed meanwhile.
//
// Pitfall: a chunk already past this wait when Freeze is called is still written;
// Freeze holds what is read after it.
func (p *Proxy) waitThawed(done <-chan struct{}) bool {
	p.mu.Lock()
	thawed := p.thawed
	p.mu.Unlock()
	select {
	case <-thawed:
		return true
	case <-done:
		return false
	case <-p.closing:
		return false
	}
}
