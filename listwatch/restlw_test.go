package listwatch

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/internal/testrig/testlog"
	"github.com/kubeinternals/informers/reflector"
)

// fakeAPIServer serves one handler and records each request's URL and Accept header.
type fakeAPIServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []string // guarded by mu: "Accept | path?query"
}

func newFakeAPIServer(t *testing.T, handler http.HandlerFunc) *fakeAPIServer {
	s := &fakeAPIServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Header.Get("Accept")+" | "+r.URL.Path+"?"+r.URL.RawQuery)
		s.mu.Unlock()
		handler(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *fakeAPIServer) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func newTestClient(t *testing.T, host string, gv schema.GroupVersion) *rest.RESTClient {
	c, err := NewRESTClient(&rest.Config{Host: host}, gv)
	require.NoError(t, err)
	return c
}

func newConfigMapLW(t *testing.T, host string, protobuf bool, logger *slog.Logger) *RESTListerWatcher[*corev1.ConfigMap] {
	s, err := NewScheme(corev1.AddToScheme)
	require.NoError(t, err)
	lw, err := New[*corev1.ConfigMap](newTestClient(t, host, corev1.SchemeGroupVersion), Options{
		Resource: "configmaps", Namespace: "ns", LabelSelector: "app=web", FieldSelector: "metadata.name!=x",
		Scheme: s, Protobuf: protobuf, Logger: logger,
	})
	require.NoError(t, err)
	return lw
}

// writeStatus writes an API error the way the API server does.
func writeStatus(w http.ResponseWriter, err error) {
	s := err.(apierrors.APIStatus).Status()
	s.Kind, s.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(s.Code))
	_ = jsonEncode(w, &s)
}

func TestRESTListerWatcherList(t *testing.T) {
	for _, protobuf := range []bool{false, true} {
		t.Run(fmt.Sprintf("a LIST is decoded from %s with selectors, namespace and one Accept type", map[bool]string{false: "JSON", true: "protobuf"}[protobuf]), func(t *testing.T) {
			w := newWire(t, protobuf)
			list := &corev1.ConfigMapList{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"},
				ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "next"},
				Items:    []corev1.ConfigMap{*configMap("a", "40"), *configMap("b", "41")},
			}
			srv := newFakeAPIServer(t, func(rw http.ResponseWriter, r *http.Request) {
				rw.Header().Set("Content-Type", w.mediaType())
				_, _ = rw.Write(w.object(list))
			})
			lw := newConfigMapLW(t, srv.URL, protobuf, nil)
			res, err := lw.List(t.Context(), metav1.ListOptions{ResourceVersion: "0", Limit: 500})
			require.NoError(t, err)
			assert.Equal(t, "42", res.ResourceVersion)
			assert.Equal(t, "next", res.Continue)
			require.Len(t, res.Items, 2)
			assert.Equal(t, "a", res.Items[0].Name)
			assert.Equal(t, map[string]string{"k": "b"}, res.Items[1].Data)
			q := url.Values{"labelSelector": {"app=web"}, "fieldSelector": {"metadata.name!=x"}, "resourceVersion": {"0"}, "limit": {"500"}}
			assert.Equal(t, []string{w.mediaType() + " | /api/v1/namespaces/ns/configmaps?" + q.Encode()}, srv.Requests())
		})
	}
}

func TestListItemsDoNotShareThePageArray(t *testing.T) {
	list := &corev1.ConfigMapList{Items: []corev1.ConfigMap{*configMap("a", "1"), *configMap("b", "2")}}
	res, err := itemsOf[*corev1.ConfigMap](list)
	require.NoError(t, err)
	require.Len(t, res.Items, 2)
	for i := range list.Items {
		assert.NotSame(t, &list.Items[i], res.Items[i], "item %d is its own allocation", i)
		assert.Equal(t, list.Items[i].Name, res.Items[i].Name)
	}
}

func TestRESTListerWatcherListErrors(t *testing.T) {
	srv := newFakeAPIServer(t, func(rw http.ResponseWriter, r *http.Request) {
		writeStatus(rw, apierrors.NewResourceExpired("too old"))
	})
	lw := newConfigMapLW(t, srv.URL, false, nil)
	_, err := lw.List(t.Context(), metav1.ListOptions{})
	assert.True(t, apierrors.IsResourceExpired(err), "a 410 Status becomes the API error, got %v", err)
}

// collect drains w until it closes or timeout passes.
func collect[T any](t *testing.T, w reflector.Watch[T], timeout time.Duration) []reflector.Event[T] {
	t.Helper()
	var out []reflector.Event[T]
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-deadline:
			t.Fatalf("watch did not close within %v; got %d events", timeout, len(out))
		}
	}
}

func TestRESTListerWatcherWatchSkipsUndecodableObjects(t *testing.T) {
	for _, protobuf := range []bool{false, true} {
		t.Run(fmt.Sprintf("in %s, wrong-type and undecodable objects are logged with their key and skipped, and the watch goes on", map[bool]string{false: "JSON", true: "protobuf"}[protobuf]), func(t *testing.T) {
			w := newWire(t, protobuf)
			gone := apierrors.NewResourceExpired("too old resource version").ErrStatus
			gone.Kind, gone.APIVersion = "Status", "v1"
			end := configMap("", "50")
			end.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
			stream := [][]byte{
				w.event(watch.Added, configMap("a", "11")),
				w.event(watch.Added, secret("s1", "12")),
				w.frame(watch.Modified, w.corruptObject("bad")),
				w.frame("WEIRD", w.object(configMap("c", "13"))),
				w.frame(watch.Added, nil),
				w.event(watch.Modified, configMap("a", "14")),
				w.event(watch.Bookmark, end),
				w.event(watch.Error, &gone),
			}
			srv := newFakeAPIServer(t, func(rw http.ResponseWriter, r *http.Request) {
				rw.Header().Set("Content-Type", w.mediaType()+";stream=watch")
				for _, f := range stream {
					_, _ = rw.Write(f)
				}
			})
			logs := &testlog.Recorder{}
			lw := newConfigMapLW(t, srv.URL, protobuf, slog.New(logs))
			timeout := int64(300)
			sendInitialEvents := true
			wt, err := lw.Watch(t.Context(), metav1.ListOptions{ResourceVersion: "10", AllowWatchBookmarks: true, TimeoutSeconds: &timeout, SendInitialEvents: &sendInitialEvents, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
			require.NoError(t, err)
			defer wt.Stop()
			events := collect(t, wt, 10*time.Second)

			var got []string
			for _, ev := range events {
				if ev.Type == watch.Error {
					got = append(got, fmt.Sprintf("ERROR %d %s", ev.Status.Code, ev.Status.Reason))
					continue
				}
				got = append(got, fmt.Sprintf("%s %s@%s end=%s", ev.Type, ev.Object.Name, ev.Object.ResourceVersion, ev.Object.Annotations[metav1.InitialEventsAnnotationKey]))
			}
			assert.Equal(t, []string{"ADDED a@11 end=", "MODIFIED a@14 end=", "BOOKMARK @50 end=true", "ERROR 410 Expired"}, got)

			skipped := logs.Lines("skipping watch event")
			require.Len(t, skipped, 4, "%q", skipped)
			assert.Contains(t, skipped[0], "key=ns/s1")
			assert.Contains(t, skipped[0], "wrong type")
			assert.Contains(t, skipped[1], "key=ns/bad")
			assert.Contains(t, skipped[2], "key=ns/c")
			assert.Contains(t, skipped[2], "unknown watch event type")
			assert.Contains(t, skipped[3], "has no object")

			q := url.Values{"labelSelector": {"app=web"}, "fieldSelector": {"metadata.name!=x"}, "resourceVersion": {"10"}, "watch": {"true"},
				"allowWatchBookmarks": {"true"}, "timeoutSeconds": {"300"}, "sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"}}
			assert.Equal(t, []string{w.mediaType() + " | /api/v1/namespaces/ns/configmaps?" + q.Encode()}, srv.Requests())
		})
	}
}

func TestRESTListerWatcherWatchStreamEnds(t *testing.T) {
	t.Run("broken JSON framing ends the watch with a 500 Error event", func(t *testing.T) {
		w := newWire(t, false)
		srv := newFakeAPIServer(t, func(rw http.ResponseWriter, r *http.Request) {
			_, _ = rw.Write(w.event(watch.Added, configMap("a", "1")))
			_, _ = rw.Write([]byte(`{"type":"ADDED","object":{,,}`))
			_, _ = rw.Write(w.event(watch.Added, configMap("b", "2")))
		})
		wt, err := newConfigMapLW(t, srv.URL, false, nil).Watch(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
		defer wt.Stop()
		events := collect(t, wt, 10*time.Second)
		require.Len(t, events, 2)
		assert.Equal(t, "a", events[0].Object.Name)
		require.Equal(t, watch.Error, events[1].Type)
		assert.True(t, apierrors.IsInternalError(apierrors.FromObject(events[1].Status)))
	})
	t.Run("a stream cut in the middle of a frame ends without an error event", func(t *testing.T) {
		w := newWire(t, true)
		srv := newFakeAPIServer(t, func(rw http.ResponseWriter, r *http.Request) {
			f := w.event(watch.Added, configMap("a", "1"))
			_, _ = rw.Write(f)
			_, _ = rw.Write(f[:len(f)/2])
		})
		wt, err := newConfigMapLW(t, srv.URL, true, nil).Watch(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
		defer wt.Stop()
		events := collect(t, wt, 10*time.Second)
		require.Len(t, events, 1)
		assert.Equal(t, watch.Added, events[0].Type)
	})
	t.Run("Stop ends an open stream and returns once its goroutine has exited", func(t *testing.T) {
		w := newWire(t, false)
		srv := newFakeAPIServer(t, func(rw http.ResponseWriter, r *http.Request) {
			_, _ = rw.Write(w.event(watch.Added, configMap("a", "1")))
			rw.(http.Flusher).Flush()
			<-r.Context().Done()
		})
		wt, err := newConfigMapLW(t, srv.URL, false, nil).Watch(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
		ev := <-wt.ResultChan()
		assert.Equal(t, "a", ev.Object.Name)
		wt.Stop()
		wt.Stop() // a second Stop is harmless
		_, open := <-wt.ResultChan()
		assert.False(t, open, "the result channel is closed after Stop")
		assert.True(t, wt.(*streamWatch[*corev1.ConfigMap]).stopped())
		select {
		case <-wt.(*streamWatch[*corev1.ConfigMap]).exited:
		default:
			t.Fatal("the decoding goroutine is still running after Stop")
		}
	})
	t.Run("cancelling the context ends the stream without an error event", func(t *testing.T) {
		srv := newFakeAPIServer(t, func(rw http.ResponseWriter, r *http.Request) {
			rw.(http.Flusher).Flush()
			<-r.Context().Done()
		})
		ctx, cancel := context.WithCancel(t.Context())
		wt, err := newConfigMapLW(t, srv.URL, false, nil).Watch(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		defer wt.Stop()
		cancel()
		assert.Empty(t, collect(t, wt, 10*time.Second))
	})
}

// The reflector decides from these errors whether to relist (reflector/errors.go:
// isExpiredError, isWatchErrorRetriable); here, that the ListerWatcher hands them over
// as the API errors those predicates read.
func TestRESTListerWatcherWatchErrors(t *testing.T) {
	t.Run("a 410 answer to the watch request is the Expired API error", func(t *testing.T) {
		srv := newFakeAPIServer(t, func(rw http.ResponseWriter, r *http.Request) {
			writeStatus(rw, apierrors.NewResourceExpired("too old"))
		})
		_, err := newConfigMapLW(t, srv.URL, false, nil).Watch(t.Context(), metav1.ListOptions{})
		assert.True(t, apierrors.IsResourceExpired(err), "got %v", err)
	})
	t.Run("a 429 answer is retriable without a relist", func(t *testing.T) {
		srv := newFakeAPIServer(t, func(rw http.ResponseWriter, r *http.Request) {
			writeStatus(rw, apierrors.NewTooManyRequests("slow down", 0))
		})
		_, err := newConfigMapLW(t, srv.URL, false, nil).Watch(t.Context(), metav1.ListOptions{})
		assert.True(t, apierrors.IsTooManyRequests(err), "got %v", err)
	})
	t.Run("a refused connection is retriable without a relist", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		_, err := newConfigMapLW(t, srv.URL, false, nil).Watch(t.Context(), metav1.ListOptions{})
		require.Error(t, err)
		assert.True(t, utilnet.IsConnectionRefused(err), "got %v", err)
		assert.ErrorIs(t, err, syscall.ECONNREFUSED)
	})
}

func TestUnstructuredListerWatcher(t *testing.T) {
	foo := func(name, rv string) string {
		return `{"apiVersion":"example.com/v1","kind":"Foo","metadata":{"namespace":"ns","name":"` + name + `","resourceVersion":"` + rv + `"},"spec":{"size":3}}`
	}
	srv := newFakeAPIServer(t, func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") != "true" {
			_, _ = rw.Write([]byte(`{"apiVersion":"example.com/v1","kind":"FooList","metadata":{"resourceVersion":"5"},"items":[` + foo("a", "4") + `]}`))
			return
		}
		_, _ = rw.Write([]byte(`{"type":"ADDED","object":` + foo("b", "6") + "}\n"))
		_, _ = rw.Write([]byte(`{"type":"ADDED","object":{"metadata":{"namespace":"ns","name":"nokind"}}}` + "\n"))
		_, _ = rw.Write([]byte(`{"type":"DELETED","object":` + foo("a", "7") + "}\n"))
	})
	logs := &testlog.Recorder{}
	lw, err := New[*unstructured.Unstructured](newTestClient(t, srv.URL, schema.GroupVersion{Group: "example.com", Version: "v1"}),
		Options{Resource: "foos", Logger: slog.New(logs)})
	require.NoError(t, err)

	res, err := lw.List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, "5", res.ResourceVersion)
	require.Len(t, res.Items, 1)
	size, _, _ := unstructured.NestedInt64(res.Items[0].Object, "spec", "size")
	assert.Equal(t, int64(3), size)
	assert.Equal(t, "Foo", res.Items[0].GetKind(), "unstructured objects keep their kind")

	wt, err := lw.Watch(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	defer wt.Stop()
	events := collect(t, wt, 10*time.Second)
	require.Len(t, events, 2)
	assert.Equal(t, "b", events[0].Object.GetName())
	assert.Equal(t, watch.Deleted, events[1].Type)
	skipped := logs.Lines("skipping watch event")
	require.Len(t, skipped, 1)
	assert.Contains(t, skipped[0], "key=ns/nokind")
	assert.Contains(t, srv.Requests()[0], "application/json | /apis/example.com/v1/foos?")
}

func TestNewListerWatcherRejectsBadInput(t *testing.T) {
	core := newTestClient(t, "http://127.0.0.1:1", corev1.SchemeGroupVersion)
	coreScheme, err := NewScheme(corev1.AddToScheme)
	require.NoError(t, err)
	tests := []struct {
		name string
		new  func() error
	}{
		{"a nil client is rejected", func() error {
			_, err := New[*corev1.ConfigMap](nil, Options{Resource: "configmaps", Scheme: coreScheme})
			return err
		}},
		{"an empty Resource is rejected", func() error {
			_, err := New[*corev1.ConfigMap](core, Options{Scheme: coreScheme})
			return err
		}},
		{"a malformed label selector is rejected", func() error {
			_, err := New[*corev1.ConfigMap](core, Options{Resource: "configmaps", Scheme: coreScheme, LabelSelector: "a in (b"})
			return err
		}},
		{"a malformed field selector is rejected", func() error {
			_, err := New[*corev1.ConfigMap](core, Options{Resource: "configmaps", Scheme: coreScheme, FieldSelector: "a=b=c=d,,"})
			return err
		}},
		{"a type missing from the scheme is rejected", func() error {
			_, err := New[*appsv1.Deployment](core, Options{Resource: "deployments", Scheme: coreScheme})
			return err
		}},
		{"a type of another group version than the client is rejected", func() error {
			s, err := NewScheme(corev1.AddToScheme, appsv1.AddToScheme)
			require.NoError(t, err)
			_, err = New[*appsv1.Deployment](core, Options{Resource: "deployments", Scheme: s})
			return err
		}},
		{"a typed object without a Scheme is rejected", func() error {
			_, err := New[*corev1.ConfigMap](core, Options{Resource: "configmaps"})
			return err
		}},
		{"unstructured with a Scheme is rejected", func() error {
			_, err := New[*unstructured.Unstructured](core, Options{Resource: "configmaps", Scheme: coreScheme})
			return err
		}},
		{"protobuf without a Scheme is rejected", func() error {
			_, err := New[*unstructured.Unstructured](core, Options{Resource: "configmaps", Protobuf: true})
			return err
		}},
		{"a nil AddToScheme is rejected", func() error {
			_, err := NewScheme(nil)
			return err
		}},
		{"a REST client without a version is rejected", func() error {
			_, err := NewRESTClient(&rest.Config{Host: "http://127.0.0.1:1"}, schema.GroupVersion{Group: "apps"})
			return err
		}},
		{"a nil rest.Config is rejected", func() error {
			_, err := NewRESTClient(nil, corev1.SchemeGroupVersion)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, tt.new(), ErrInvalidOptions)
		})
	}
}

func TestNewRESTClientPaths(t *testing.T) {
	srv := newFakeAPIServer(t, func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		_, _ = rw.Write([]byte(`{"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{"resourceVersion":"1"},"items":[]}`))
	})
	s, err := NewScheme(appsv1.AddToScheme)
	require.NoError(t, err)
	lw, err := New[*appsv1.Deployment](newTestClient(t, srv.URL, appsv1.SchemeGroupVersion), Options{Resource: "deployments", Scheme: s})
	require.NoError(t, err)
	_, err = lw.List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"application/json | /apis/apps/v1/deployments?"}, srv.Requests())
}

func TestFrameReaderSkipsOversizedFrames(t *testing.T) {
	w := newWire(t, true)
	small := w.event(watch.Added, configMap("a", "1"))
	big := configMap("big", "2")
	big.Data = map[string]string{"k": string(make([]byte, 64<<10))}
	body := append(append(append([]byte(nil), small...), w.event(watch.Added, big)...), small...)
	c, err := newTypedCodec[*corev1.ConfigMap](w.scheme, corev1.SchemeGroupVersion, true)
	require.NoError(t, err)
	fr := newFrameReader(c.framer, nopCloser{bytesReader(body)})
	fr.max = 16 << 10

	_, err = fr.next()
	require.NoError(t, err)
	_, err = fr.next()
	require.ErrorIs(t, err, errFrameTooLarge)
	f, err := fr.next()
	require.NoError(t, err, "the reader resynchronises on the next frame")
	ev, err := c.decodeEvent(f)
	require.NoError(t, err)
	assert.Equal(t, "a", ev.Object.Name)
}

func TestDecodeStatusOfAnUnreadableErrorEventIsAnInternalError(t *testing.T) {
	for _, protobuf := range []bool{false, true} {
		w := newWire(t, protobuf)
		c, err := newTypedCodec[*corev1.ConfigMap](w.scheme, corev1.SchemeGroupVersion, protobuf)
		require.NoError(t, err)
		frame := []byte(`{"type":"ERROR","object":{"code":"not a number"}}`)
		if protobuf {
			frame = w.frame(watch.Error, []byte("garbage"))[4:] // without the length prefix
		}
		ev, err := c.decodeEvent(frame)
		require.NoError(t, err)
		assert.True(t, apierrors.IsInternalError(apierrors.FromObject(ev.Status)))
	}
}

var _ runtime.Object = (*corev1.ConfigMap)(nil)

func TestNewListerWatcherForConfigBuildsTheClientForTheGroupVersion(t *testing.T) {
	t.Run("a nil config or a group version without version is refused", func(t *testing.T) {
		_, err := NewForConfig[*corev1.ConfigMap](nil, corev1.SchemeGroupVersion, Options{Resource: "configmaps"})
		assert.ErrorIs(t, err, ErrInvalidOptions)
		_, err = NewForConfig[*corev1.ConfigMap](&rest.Config{Host: "http://127.0.0.1:1"}, schema.GroupVersion{Group: "apps"}, Options{Resource: "deployments"})
		assert.ErrorIs(t, err, ErrInvalidOptions)
	})
	t.Run("a LIST goes to the resource's path in that group version", func(t *testing.T) {
		srv := newFakeAPIServer(t, func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "application/json")
			_, _ = rw.Write([]byte(`{"apiVersion":"apps/v1","kind":"DeploymentList","metadata":{"resourceVersion":"7"},"items":[]}`))
		})
		lw, err := NewForConfig[*unstructured.Unstructured](&rest.Config{Host: srv.URL}, schema.GroupVersion{Group: "apps", Version: "v1"}, Options{Resource: "deployments", Namespace: "ns"})
		require.NoError(t, err)
		res, err := lw.List(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
		assert.Equal(t, "7", res.ResourceVersion)
		require.Len(t, srv.Requests(), 1)
		assert.Contains(t, srv.Requests()[0], "/apis/apps/v1/namespaces/ns/deployments?")
	})
}
