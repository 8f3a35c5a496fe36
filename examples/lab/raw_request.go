package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// rawRequest is one GET written by hand on a TLS connection of its own, and the head
// of its response: the status line and the headers, as they came. HTTP/1.1 (ALPN
// http/1.1), because only HTTP/1.1 has chunks to show; nothing but this code writes
// the request, so no header is added on the way.
type rawRequest struct {
	host    string   // host:port it was sent to
	shown   []string // the request's lines, the token elided
	status  string   // "HTTP/1.1 200 OK"
	headers []string // "Name: value", in the order received
	br      *bufio.Reader
	close   func() // closes the connection; may be called more than once
}

// openRaw connects to cfg's server with cfg's CA and client certificate (and bearer
// token, if any), sends GET path?q with "Accept: application/json" — and
// "Accept-Encoding: gzip" when acceptGzip, as Go's http.Transport adds to every
// request of client-go's rest client unless rest.Config.DisableCompression is set —
// and reads the response's head. The body is left to read from br.
func openRaw(ctx context.Context, cfg *rest.Config, path string, q url.Values, acceptGzip bool) (*rawRequest, error) {
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, err
	}
	if tlsCfg == nil {
		return nil, fmt.Errorf("watch-wire needs an https server, got %s", cfg.Host)
	}
	tlsCfg.NextProtos = []string{"http/1.1"}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	token := cfg.BearerToken
	if token == "" && cfg.BearerTokenFile != "" {
		b, err := os.ReadFile(cfg.BearerTokenFile)
		if err != nil {
			return nil, err
		}
		token = strings.TrimSpace(string(b))
	}
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 10 * time.Second}, Config: tlsCfg}
	conn, err := dialer.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() }) // a cancelled scenario ends the reads
	raw := &rawRequest{host: u.Host, br: bufio.NewReader(conn), close: sync.OnceFunc(func() {
		stop()
		_ = conn.Close()
	})}
	request := []string{
		"GET " + strings.TrimSuffix(u.Path, "/") + path + "?" + q.Encode() + " HTTP/1.1",
		"Host: " + u.Host,
		"Accept: application/json",
	}
	if acceptGzip {
		request = append(request, "Accept-Encoding: gzip")
	}
	request = append(request, "User-Agent: kubeinternals-lab/watch-wire")
	raw.shown = slices.Clone(request)
	if token != "" {
		request = append(request, "Authorization: Bearer "+token)
		raw.shown = append(raw.shown, "Authorization: Bearer <token>")
	}
	if _, err := io.WriteString(conn, strings.Join(request, "\r\n")+"\r\n\r\n"); err != nil {
		raw.close()
		return nil, err
	}
	if raw.status, raw.headers, err = readHead(raw.br); err != nil {
		raw.close()
		return nil, err
	}
	return raw, nil
}

// readHead reads an HTTP response's status line and headers, up to the blank line.
func readHead(br *bufio.Reader) (status string, headers []string, err error) {
	status, err = br.ReadString('\n')
	if err != nil {
		return "", nil, fmt.Errorf("reading the status line: %w", err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", nil, fmt.Errorf("reading the headers: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			return strings.TrimRight(status, "\r\n"), headers, nil
		}
		headers = append(headers, line)
	}
}

// header is the value of the named header in "Name: value" lines, or "".
func header(lines []string, name string) string {
	for _, l := range lines {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// report puts the request as sent into r's "What we do" and, once the answer is a 200,
// its status line and headers into "What we saw" under what ("the plain WATCH"). Any
// other status is an error: the experiment could not be done.
func (raw *rawRequest) report(r *Report, what string) error {
	for _, l := range raw.shown {
		r.Do("  %s", l)
	}
	if !strings.Contains(raw.status, " 200 ") {
		return fmt.Errorf("%s was refused: %s", what, raw.status)
	}
	r.See("%s:", what)
	r.See("%s", raw.status)
	for _, h := range raw.headers {
		r.See("%s", h)
	}
	r.See("")
	return nil
}
