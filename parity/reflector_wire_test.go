package parity

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/reflector"
)

// Exceptions of docs/defaults.md's "## Reflector" table that are about the wire: each
// library's REST ListerWatcher over a rest.Config whose transport is a scripted
// http.RoundTripper, in process (no network, so it runs inside a synctest bubble).

// wireServer answers each request with the next scripted body, and keeps the requests.
// A request past the script blocks until its context ends, as an idle watch does.
type wireServer struct {
	mu       sync.Mutex
	bodies   []string
	requests []*http.Request
}

func (s *wireServer) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	var body io.ReadCloser
	if len(s.bodies) > 0 {
		body = io.NopCloser(strings.NewReader(s.bodies[0]))
		s.bodies = s.bodies[1:]
	} else {
		body = idleBody{req.Context()}
	}
	s.mu.Unlock()
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: body, Request: req}, nil
}

// idleBody is a watch on which nothing happens, until the request is cancelled.
type idleBody struct{ ctx context.Context }

func (b idleBody) Read([]byte) (int, error) { <-b.ctx.Done(); return 0, io.EOF }
func (b idleBody) Close() error             { return nil }

// describe lists each request as its verb ("watch" or "list") and Accept header.
func (s *wireServer) describe() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.requests))
	for i, r := range s.requests {
		verb, q := "LIST", r.URL.Query()
		switch {
		case q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true":
			verb = "WATCH-LIST"
		case q.Get("watch") == "true":
			verb = "WATCH"
		}
		out[i] = verb + " Accept: " + r.Header.Get("Accept")
	}
	return out
}

func (s *wireServer) config() *rest.Config {
	return &rest.Config{Host: "http://apiserver.invalid", Transport: s}
}

// clientGoBareLW is client-go's ListerWatcher over a REST client configured only with
// the group version and the scheme's codecs, as its own examples build one.
//
// client-go: tools/cache/listwatch.go NewListWatchFromClient
func clientGoBareLW(t *testing.T, s *wireServer) *cache.ListWatch {
	cfg := s.config()
	cfg.APIPath = "/api"
	cfg.GroupVersion = &corev1.SchemeGroupVersion
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	client, err := rest.RESTClientFor(cfg)
	require.NoError(t, err)
	return cache.NewListWatchFromClient(client, "configmaps", "ns", fields.Everything())
}

// oursLWOver is our REST ListerWatcher of ConfigMaps over s.
func oursLWOver(t *testing.T, s *wireServer, protobuf bool, logger *slog.Logger) *listwatch.RESTListerWatcher[*corev1.ConfigMap] {
	client, err := listwatch.NewRESTClient(s.config(), corev1.SchemeGroupVersion)
	require.NoError(t, err)
	sch, err := listwatch.NewScheme(corev1.AddToScheme)
	require.NoError(t, err)
	lw, err := listwatch.New[*corev1.ConfigMap](client, listwatch.Options{Resource: "configmaps", Namespace: "ns", Scheme: sch, Protobuf: protobuf, Logger: logger})
	require.NoError(t, err)
	return lw
}

// clientGoTypedList sends the LIST of ConfigMaps as client-go's typed clientset does:
// a REST client configured as kubernetes/typed/core/v1 configures it, and a request
// marked UseProtobufAsDefaultIfPreferred with the PrefersProtobuf its ConfigMaps client
// is built with. (Those packages themselves would add modules to parity's go.mod: they
// import the apply configurations.)
//
// client-go: kubernetes/typed/core/v1/core_client.go setConfigDefaults
// client-go: kubernetes/typed/core/v1/configmap.go newConfigMaps
// client-go: gentype/type.go alsoLister.List
func clientGoTypedList(t *testing.T, s *wireServer) error {
	cfg := s.config()
	cfg.APIPath = "/api"
	cfg.GroupVersion = &corev1.SchemeGroupVersion
	cfg.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(scheme.Scheme, scheme.Codecs).WithoutConversion()
	client, err := rest.RESTClientFor(cfg)
	require.NoError(t, err)
	return client.Get().UseProtobufAsDefaultIfPreferred(true).Namespace("ns").Resource("configmaps").
		VersionedParams(&metav1.ListOptions{}, scheme.ParameterCodec).Do(t.Context()).Into(&corev1.ConfigMapList{})
}

const emptyListJSON = `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`

// client-go: rest/config.go RESTClientFor
// client-go: gentype/type.go PrefersProtobuf
var _ = exception("docs/defaults.md", "Reflector", "wire format of a bare ListerWatcher", func(t *testing.T) {
	const json, protobuf = "application/json", "application/vnd.kubernetes.protobuf"
	t.Run("client-go: JSON for a bare REST client, protobuf for the typed clientset", func(t *testing.T) {
		s := &wireServer{bodies: []string{emptyListJSON, emptyListJSON}}
		_, err := clientGoBareLW(t, s).ListWithContext(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
		err = clientGoTypedList(t, s)
		require.NoError(t, err)
		got := s.describe()
		require.Len(t, got, 2)
		require.Equal(t, "LIST Accept: "+json+", */*", got[0], "a bare REST client")
		require.True(t, strings.HasPrefix(got[1], "LIST Accept: "+protobuf), "the typed clientset: %s", got[1])
	})
	t.Run("ours: JSON unless Options.Protobuf", func(t *testing.T) {
		s := &wireServer{bodies: []string{emptyListJSON, emptyListJSON}}
		_, err := oursLWOver(t, s, false, quiet).List(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
		// The answer is JSON still: only the request is looked at.
		_, _ = oursLWOver(t, s, true, quiet).List(t.Context(), metav1.ListOptions{})
		require.Equal(t, []string{"LIST Accept: " + json, "LIST Accept: " + protobuf}, s.describe())
	})
})

// watchListBadThenGood is a watch-list stream of an empty state — only the bookmark
// that ends the initial events — then a watch event whose object cannot be decoded
// into a ConfigMap (its data is a number), then one whose object can; then it ends.
const watchListBadThenGood = `{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"1","annotations":{"k8s.io/initial-events-end":"true"}}}}
{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"2"},"data":5}}
{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b","namespace":"ns","resourceVersion":"3"}}}
`

// client-go: k8s.io/apimachinery/pkg/watch/streamwatcher.go StreamWatcher.receive
// client-go: tools/cache/reflector.go handleAnyWatch (watch.Error)
var _ = exception("docs/defaults.md", "Reflector", "an undecodable watch object", func(t *testing.T) {
	// Each reflector, at its default (a watch-list), gets the stream above; every later
	// request is an idle watch.
	t.Run("client-go: an ERROR event; the watch ends and everything is relisted", func(t *testing.T) {
		withoutErrorBackoff(t)
		synctest.Test(t, func(t *testing.T) {
			s := &wireServer{bodies: []string{watchListBadThenGood}}
			store := cache.NewStore(cache.MetaNamespaceKeyFunc)
			r := cache.NewReflectorWithOptions(clientGoBareLW(t, s), &corev1.ConfigMap{}, store, cache.ReflectorOptions{Logger: &quietKlog})
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() { defer close(done); r.RunWithContext(klog.NewContext(ctx, quietKlog)) }()
			time.Sleep(time.Minute)
			synctest.Wait()
			require.Equal(t, []string{"WATCH-LIST", "WATCH-LIST"}, verbsOf(s.describe()), "the ERROR event ended the watch, and a relist followed")
			require.Empty(t, store.ListKeys(), "b, after the bad object, never reached the store")
			require.Equal(t, "1", r.LastSyncResourceVersion())
			cancel()
			<-done
		})
	})
	t.Run("ours: skipped and logged with its key; the watch goes on", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := &wireServer{bodies: []string{watchListBadThenGood}}
			var logs lines
			lw := oursLWOver(t, s, false, slog.New(slog.NewTextHandler(&logs, nil)))
			store := newRecordingStore(newCMServer(), &endpoint{})
			r, err := reflector.NewReflector[*corev1.ConfigMap](lw, oursStore{store}, reflector.Options[*corev1.ConfigMap]{Logger: quiet})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() { defer close(done); r.Run(ctx) }()
			time.Sleep(time.Minute)
			synctest.Wait()
			// The stream's end after b is a plain end: a re-watch from b's RV, no relist.
			require.Equal(t, []string{"WATCH-LIST", "WATCH"}, verbsOf(s.describe()))
			require.Equal(t, "[b@3]", store.contents(), "b, after the bad object, was applied")
			require.Equal(t, "3", r.LastSyncResourceVersion())
			cancel()
			<-done
			require.Regexp(t, `level=WARN msg="skipping watch event" key=ns/a eventType=ADDED`, logs.String())
		})
	})
})

func verbsOf(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i], _, _ = strings.Cut(l, " ")
	}
	return out
}

// watchGoroutines opens one idle watch-list and one idle plain watch through watch and
// returns how many goroutines each left running, counted in its synctest bubble (where
// every goroutine but the test's own is the watch's).
func watchGoroutines[W interface{ Stop() }](t *testing.T, watch func(ctx context.Context, opts metav1.ListOptions) (W, error)) (watchList, plain int) {
	count := func(opts metav1.ListOptions) (n int) {
		synctest.Test(t, func(t *testing.T) {
			synctest.Wait()
			before := bubbleGoroutines(t)
			w, err := watch(t.Context(), opts)
			require.NoError(t, err)
			synctest.Wait()
			n = bubbleGoroutines(t) - before
			w.Stop()
		})
		return n
	}
	sendInitialEvents := true
	return count(metav1.ListOptions{SendInitialEvents: &sendInitialEvents, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}),
		count(metav1.ListOptions{ResourceVersion: "5", AllowWatchBookmarks: true})
}

// client-go: rest/request.go Request.Watch
var _ = exception("docs/defaults.md", "Reflector", "decoding a watch-list", func(t *testing.T) {
	cgList, cgPlain := watchGoroutines(t, func(ctx context.Context, opts metav1.ListOptions) (interface{ Stop() }, error) {
		return clientGoBareLW(t, &wireServer{}).WatchWithContext(ctx, opts)
	})
	require.Equal(t, cgPlain, cgList, "client-go 1.37: a watch-list is decoded like any watch, on one goroutine")

	ourList, ourPlain := watchGoroutines(t, func(ctx context.Context, opts metav1.ListOptions) (reflector.Watch[*corev1.ConfigMap], error) {
		return oursLWOver(t, &wireServer{}, false, quiet).Watch(ctx, opts)
	})
	if decoders := min(runtime.GOMAXPROCS(0), 4); decoders > 1 {
		require.Equal(t, ourPlain+decoders+1, ourList, "ours: a watch-list gets %d decoders and the goroutine that hands their events over in order", decoders)
	} else {
		require.Equal(t, ourPlain, ourList, "ours, on one processor: the sequential path, as client-go")
	}
})
