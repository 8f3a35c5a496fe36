package testenv

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"

	"k8s.io/client-go/rest"
)

// Proxy is a TCP proxy on loopback in front of kube-apiserver. A client configured
// through it (Proxy.Config) talks to the real apiserver — TLS passes through untouched
// — while a test cuts its connections (Cut) or makes it unreachable for a while
// (Refuse, then Accept): the network faults a watch must survive.
//
// Goroutines: one accept loop while listening, and two copiers per connection; all
// end when Close returns.
type Proxy struct {
	target string // host:port of kube-apiserver
	addr   string // host:port we listen on, kept across Refuse/Accept

	mu      sync.Mutex            // guards ln, conns, closed
	ln      net.Listener          // nil while refusing; guarded by mu
	conns   map[net.Conn]struct{} // both ends of every open connection; guarded by mu
	closed  bool                  // guarded by mu
	counted int                   // client connections accepted so far; guarded by mu

	wg sync.WaitGroup // the accept loop and the copiers
}

// StartProxy listens on a free loopback port and forwards every connection to the
// host:port of apiServerURL (e.g. Env.Config.Host).
func StartProxy(apiServerURL string) (*Proxy, error) {
	u, err := url.Parse(apiServerURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("proxy: target %q is not a URL with a host: %v", apiServerURL, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	p := &Proxy{target: u.Host, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	return p, nil
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
	for c := range p.conns {
		_ = c.Close()
	}
	n := len(p.conns) / 2
	clear(p.conns)
	return n
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

// Close stops the proxy and waits for its goroutines.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
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

// forward connects client to the apiserver and copies both ways until either side
// closes or Cut closes both.
func (p *Proxy) forward(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		_ = client.Close()
		_ = server.Close()
		return
	}
	p.conns[client], p.conns[server] = struct{}{}, struct{}{}
	p.counted++
	p.mu.Unlock()

	done := func() {
		_ = client.Close()
		_ = server.Close()
		p.mu.Lock()
		delete(p.conns, client)
		delete(p.conns, server)
		p.mu.Unlock()
	}
	var once sync.Once
	p.wg.Add(2)
	// Owner: the Proxy. Each copier exits when its source closes; the first to end
	// closes both connections, which ends the other.
	for _, pair := range [][2]net.Conn{{server, client}, {client, server}} {
		go func() {
			defer p.wg.Done()
			_, _ = io.Copy(pair[0], pair[1]) // ends on EOF, a cut or a close alike
			once.Do(done)
		}()
	}
}
