package reflector_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/internal/testrig/bytecount"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
	"github.com/kubeinternals/informers/listwatch"
)

// TestIntegrationAWatchListIsGzippedOnTheWireAndDecodedBeforeOurDecoder: what our
// RESTListerWatcher asks for and gets from kube-apiserver v1.37, whose
// WatchListCompression feature is on by default. We never set Accept-Encoding; Go's
// http.Transport under client-go's rest client adds "gzip" unless
// rest.Config.DisableCompression is set. The apiserver gzips a watch that, after it
// defaulted the request's options, has sendInitialEvents=true and
// allowWatchBookmarks=true — a watch-list, and a watch from RV "" or "0" with
// bookmarks, which it turns into one — and no other watch. The transport
// decompresses the body and drops the Content-Encoding header before our decoder
// reads it. Observed from outside our code: the header the transport wrote
// (httptrace), the response it returned (rest.Config.WrapTransport), and the bytes
// read from the TCP connection (rest.Config.Dial) against the bytes our decoder read.
//
// kube-apiserver: k8s.io/apiserver/pkg/endpoints/handlers/watch.go watchResponseWriter.BeginStream, perFlushGzipWriter
// kube-apiserver: k8s.io/apiserver/pkg/endpoints/handlers/get.go isListWatchRequest, listOpts
// client-go: k8s.io/apimachinery/pkg/apis/meta/internalversion/defaults.go SetListOptionsDefaults (the defaulting listOpts applies)
func TestIntegrationAWatchListIsGzippedOnTheWireAndDecodedBeforeOurDecoder(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	core := integrationClient(t, env, corev1.SchemeGroupVersion)
	createNamespace(t, ctx, core, "gzip")
	const n = 200
	require.NoError(t, createConfigMaps(ctx, core, "gzip", "cm", n, nil))
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	require.NoError(t, err)

	yes := true
	watchList := metav1.ListOptions{SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}
	const late = 20 // the ConfigMaps written after the watch from a specific RV opened
	for _, tc := range []struct {
		name               string
		disableCompression bool
		protobuf           bool
		// opts are the watch's options; a watch from a specific RV (fromNow) sees the
		// late ConfigMaps only, the others every object as an ADDED event.
		opts        metav1.ListOptions
		fromNow     bool
		wantAccept  string
		wantGzipped bool
	}{
		{name: "by default a protobuf watch-list asks for gzip and arrives gzipped",
			protobuf: true, opts: watchList, wantAccept: "gzip", wantGzipped: true},
		{name: "by default a JSON watch-list asks for gzip and arrives gzipped",
			opts: watchList, wantAccept: "gzip", wantGzipped: true},
		{name: "a watch from RV 0 with bookmarks becomes a watch-list on the server and arrives gzipped",
			protobuf: true, opts: metav1.ListOptions{ResourceVersion: "0", AllowWatchBookmarks: true}, wantAccept: "gzip", wantGzipped: true},
		{name: "a watch from RV 0 without bookmarks asks for gzip and arrives plain",
			protobuf: true, opts: metav1.ListOptions{ResourceVersion: "0"}, wantAccept: "gzip", wantGzipped: false},
		{name: "with DisableCompression a watch-list asks for no gzip and arrives plain",
			disableCompression: true, protobuf: true, opts: watchList, wantAccept: "", wantGzipped: false},
		// Last: it adds objects.
		{name: "a watch from a specific RV, as the reflector's re-watch, asks for gzip and arrives plain",
			protobuf: true, opts: metav1.ListOptions{AllowWatchBookmarks: true}, fromNow: true, wantAccept: "gzip", wantGzipped: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := &wireObserver{}
			cfg := obs.config(env.Config)
			cfg.DisableCompression = tc.disableCompression
			lw, err := listwatch.NewForConfig[*corev1.ConfigMap](cfg, corev1.SchemeGroupVersion, listwatch.Options{
				Resource: "configmaps", Namespace: "gzip", Scheme: scheme, Protobuf: tc.protobuf,
			})
			require.NoError(t, err)
			opts, want := tc.opts, n
			if tc.fromNow {
				list, err := lw.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
				require.NoError(t, err)
				opts.ResourceVersion, want = list.ResourceVersion, late
				obs.reset() // the LIST's bytes are not the watch's
			}
			w, err := lw.Watch(ctx, opts)
			require.NoError(t, err)
			if tc.fromNow {
				require.NoError(t, createConfigMaps(ctx, core, "gzip", fmt.Sprintf("late-%d", len(tc.name)), late, nil))
			}
			added := 0
			for ev := range w.ResultChan() {
				require.NotEqual(t, watch.Error, ev.Type, "%v", ev.Status)
				if ev.Type == watch.Added {
					added++
				}
				if added == want && (opts.SendInitialEvents == nil || ev.Type == watch.Bookmark) {
					break
				}
			}
			w.Stop()
			assert.Equal(t, want, added, "every object decoded")

			read, decoded, resp := obs.result()
			assert.Equal(t, tc.wantAccept, resp.acceptEncoding, "the Accept-Encoding the transport wrote")
			assert.Equal(t, tc.wantGzipped, resp.uncompressed, "whether the transport decoded a gzipped body (http.Response.Uncompressed)")
			assert.Empty(t, resp.contentEncoding, "our decoder sees no Content-Encoding")
			if tc.wantGzipped {
				assert.Less(t, read, decoded/2, "gzipped: fewer bytes read from the connection (TLS and its handshake included) than decoded")
			} else {
				assert.Greater(t, read, decoded, "plain: every decoded byte crossed the connection")
			}
			t.Logf("%s, %s: %d bytes read from the connection, %d decoded", resp.proto, resp.contentType, read, decoded)
		})
	}
}

// wireObserver watches one rest.Config's traffic: the bytes its connections read,
// and for its last request the Accept-Encoding header the transport wrote and the
// response the transport returned.
type wireObserver struct {
	read, decoded atomic.Int64
	mu            sync.Mutex
	last          observedResponse // guarded by mu
}

type observedResponse struct {
	acceptEncoding  string // as Go's transport wrote it; "" if it wrote none
	uncompressed    bool   // http.Response.Uncompressed: the transport undid a gzip
	contentEncoding string // the Content-Encoding header left for the caller
	contentType     string
	proto           string
}

// config returns a copy of cfg whose connections and responses obs observes. Its
// Dial makes the transport the config's own (client-go caches no transport for a
// config with a Dial function), so each subtest opens a fresh connection.
func (obs *wireObserver) config(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = -1, 0
	dialer := &net.Dialer{Timeout: 30 * time.Second}
	c.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, address)
		if err != nil {
			return nil, err
		}
		return &bytecount.Conn{Conn: conn, N: &obs.read}, nil
	}
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			var accept string
			trace := &httptrace.ClientTrace{WroteHeaderField: func(key string, value []string) {
				if strings.EqualFold(key, "Accept-Encoding") {
					accept = strings.Join(value, ",")
				}
			}}
			resp, err := rt.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
			if err != nil {
				return nil, err
			}
			obs.mu.Lock()
			obs.last = observedResponse{acceptEncoding: accept, uncompressed: resp.Uncompressed,
				contentEncoding: resp.Header.Get("Content-Encoding"), contentType: resp.Header.Get("Content-Type"), proto: resp.Proto}
			obs.mu.Unlock()
			resp.Body = &bytecount.Body{ReadCloser: resp.Body, N: &obs.decoded}
			return resp, nil
		})
	}
	return c
}

// reset sets the byte counts to zero.
func (obs *wireObserver) reset() {
	obs.read.Store(0)
	obs.decoded.Store(0)
}

// result returns the bytes read from the connections, the bytes of response bodies
// read by the client, and what was seen of the last request.
func (obs *wireObserver) result() (read, decoded int64, last observedResponse) {
	obs.mu.Lock()
	defer obs.mu.Unlock()
	return obs.read.Load(), obs.decoded.Load(), obs.last
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
