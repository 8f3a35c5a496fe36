package controlplane

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/internal/testrig/bytecount"
)

// wireSide is one side of a row that reports what crossed the wire: a rest.Config
// whose connections count the bytes they read, and whose responses count the bytes
// the client's decoder read from them. Both sides of a pair build one each, from the
// same rest.Config, and every op of that side shares it.
//
// Why the bytes read from the connection: that is what the kube-apiserver sent — TLS
// records carrying HTTP/2 frames carrying the body, gzipped when the response says
// Content-Encoding: gzip. Go's http.Transport undoes the gzip above the connection,
// so a count of the body as the decoder reads it is the decoded size.
//
// Why one transport per side, built here, and not rest.Config.Dial on the config each
// op uses: client-go keeps one transport per TLS configuration in a process-wide cache,
// and a config with a Dial function never finds its transport there again (each
// conversion wraps the function anew). Our Factory builds its REST client in every op,
// so it would dial and handshake in every op, where the rows without a counter reuse
// one connection. Built once and handed over in rest.Config.Transport, the counting
// transport is used by every op of the side, as the cached one would be.
type wireSide struct {
	// cfg is what the side builds its clients from.
	cfg *rest.Config
	// compression is whether cfg lets Go's transport ask for gzip
	// (!rest.Config.DisableCompression).
	compression bool

	read    atomic.Int64 // bytes read from the connections, all ops and the warm-up
	decoded atomic.Int64 // bytes of response bodies read by the client, likewise
	// gzipped and plain count the watch-list responses (sendInitialEvents=true) that
	// the transport decoded from gzip (http.Response.Uncompressed) and those that
	// arrived without a Content-Encoding.
	gzipped, plain atomic.Int64
}

// newWireSide builds the side's counting transport from cfg (its TLS, credentials and
// DisableCompression) and returns the side with a copy of cfg that uses it.
func newWireSide(b *testing.B, cfg *rest.Config) *wireSide {
	b.Helper()
	w := &wireSide{compression: !cfg.DisableCompression}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second} // client-go's own (transport/cache.go)
	withDial := rest.CopyConfig(cfg)
	withDial.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, address)
		if err != nil {
			return nil, err
		}
		return &bytecount.Conn{Conn: c, N: &w.read}, nil
	}
	rt, err := rest.TransportFor(withDial) // TLS, client certificate, bearer token: all of cfg
	if err != nil {
		b.Fatal(err)
	}
	out := rest.CopyConfig(cfg)
	// The transport carries the TLS configuration and the credentials; client-go
	// refuses a custom transport beside TLS options.
	out.TLSClientConfig = rest.TLSClientConfig{}
	out.BearerToken, out.BearerTokenFile, out.Username, out.Password = "", "", "", ""
	out.Transport = &wireRoundTripper{next: rt, side: w}
	w.cfg = out
	return w
}

// bytes returns the counts so far: read from the connections, and decoded.
func (w *wireSide) bytes() (read, decoded int64) { return w.read.Load(), w.decoded.Load() }

// checkCompression fails the benchmark unless the side's watch-lists arrived gzipped
// when it asked for gzip, and plain when it did not: the kube-apiserver decides
// (its WatchListCompression feature), and a row whose meaning depends on it must not
// change meaning silently.
//
// kube-apiserver: k8s.io/apiserver/pkg/endpoints/handlers/watch.go watchResponseWriter.BeginStream
func (w *wireSide) checkCompression(b *testing.B) {
	b.Helper()
	gzipped, plain := w.gzipped.Load(), w.plain.Load()
	switch {
	case gzipped+plain == 0:
		b.Fatalf("no watch-list response was seen")
	case w.compression && plain > 0:
		b.Fatalf("asked for gzip, %d watch-list response(s) came plain (and %d gzipped): is WatchListCompression off in this kube-apiserver?", plain, gzipped)
	case !w.compression && gzipped > 0:
		b.Fatalf("compression disabled, %d watch-list response(s) came gzipped", gzipped)
	}
}

// wireRoundTripper sits above the transport that decodes gzip: it sees each response
// as the client does, counts its body as it is read, and notes whether a watch-list
// came gzipped.
type wireRoundTripper struct {
	next http.RoundTripper
	side *wireSide
}

func (t *wireRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if req.URL.Query().Get("sendInitialEvents") == "true" {
		if resp.Uncompressed {
			t.side.gzipped.Add(1)
		} else {
			t.side.plain.Add(1)
		}
	}
	resp.Body = &bytecount.Body{ReadCloser: resp.Body, N: &t.side.decoded}
	return resp, nil
}

// withoutCompression is cfg with rest.Config.DisableCompression set: Go's transport
// then sends no Accept-Encoding, and the kube-apiserver answers in plain bytes.
func withoutCompression(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.DisableCompression = true
	return c
}
