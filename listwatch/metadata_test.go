package listwatch

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// metaWire is wire for the meta.k8s.io/v1 kinds the apiserver converts to.
func metaWire(t *testing.T, protobuf bool) *wire {
	s := runtime.NewScheme()
	require.NoError(t, metav1.AddMetaToScheme(s))
	return &wire{t: t, scheme: s, protobuf: protobuf, gv: metav1.SchemeGroupVersion}
}

func partial(name, rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv, UID: types.UID("uid-" + name),
			Labels: map[string]string{"app": name}},
	}
}

// A ListerWatcher of *metav1.PartialObjectMetadata asks, on the resource's own URL,
// for PartialObjectMetadataList on a LIST and PartialObjectMetadata on a WATCH, for a
// custom resource too, in JSON or protobuf, and needs no Scheme.
func TestMetadataListerWatcherAsksForPartialObjectMetadata(t *testing.T) {
	for _, protobuf := range []bool{false, true} {
		t.Run(map[bool]string{false: "JSON", true: "protobuf"}[protobuf], func(t *testing.T) {
			w := metaWire(t, protobuf)
			list := &metav1.PartialObjectMetadataList{
				TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadataList"},
				ListMeta: metav1.ListMeta{ResourceVersion: "42"},
				Items:    []metav1.PartialObjectMetadata{*partial("a", "40"), *partial("b", "41")},
			}
			end := partial("", "50")
			end.Namespace, end.UID, end.Labels = "", "", nil
			end.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
			srv := newFakeAPIServer(t, func(rw http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("watch") != "true" {
					_, _ = rw.Write(w.object(list))
					return
				}
				rw.WriteHeader(http.StatusOK)
				for _, f := range [][]byte{w.event(watch.Added, partial("c", "43")), w.event(watch.Modified, partial("a", "44")), w.event(watch.Bookmark, end)} {
					_, _ = rw.Write(f)
				}
			})
			gv := schema.GroupVersion{Group: "samplecontroller.k8s.io", Version: "v1alpha1"}
			lw, err := New[*metav1.PartialObjectMetadata](newTestClient(t, srv.URL, gv), Options{Resource: "foos", Namespace: "ns", Protobuf: protobuf})
			require.NoError(t, err)

			res, err := lw.List(t.Context(), metav1.ListOptions{ResourceVersion: "0"})
			require.NoError(t, err)
			assert.Equal(t, "42", res.ResourceVersion)
			require.Len(t, res.Items, 2)
			assert.Equal(t, "a", res.Items[0].Name)
			assert.Equal(t, types.UID("uid-b"), res.Items[1].UID)
			assert.Equal(t, map[string]string{"app": "b"}, res.Items[1].Labels)
			assert.Empty(t, res.Items[0].Kind, "apiVersion and kind are cleared, as for typed objects")

			wt, err := lw.Watch(t.Context(), metav1.ListOptions{ResourceVersion: "42"})
			require.NoError(t, err)
			events := collect(t, wt, 10*time.Second)
			var got []string
			for _, ev := range events {
				got = append(got, fmt.Sprintf("%s %s@%s", ev.Type, ev.Object.Name, ev.Object.ResourceVersion))
			}
			assert.Equal(t, []string{"ADDED c@43", "MODIFIED a@44", "BOOKMARK @50"}, got)
			assert.Equal(t, "true", events[2].Object.Annotations[metav1.InitialEventsAnnotationKey])

			media := w.mediaType()
			reqs := srv.Requests()
			require.Len(t, reqs, 2)
			assert.Equal(t, media+";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1 | /apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns/foos?resourceVersion=0", reqs[0])
			assert.Equal(t, media+";as=PartialObjectMetadata;g=meta.k8s.io;v=v1 | /apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns/foos?resourceVersion=42&watch=true", reqs[1])
		})
	}
}

// A metadata event whose object does not decode is logged with its key and skipped,
// as for typed objects.
func TestMetadataWatchSkipsAnUndecodableObject(t *testing.T) {
	w := metaWire(t, false)
	srv := newFakeAPIServer(t, func(rw http.ResponseWriter, r *http.Request) {
		rw.WriteHeader(http.StatusOK)
		_, _ = rw.Write(w.frame(watch.Added, []byte(`{"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadata","metadata":{"namespace":"ns","name":"bad","labels":"not a map"}}`)))
		_, _ = rw.Write(w.event(watch.Added, partial("good", "2")))
	})
	lw, err := New[*metav1.PartialObjectMetadata](newTestClient(t, srv.URL, schema.GroupVersion{Version: "v1"}), Options{Resource: "pods"})
	require.NoError(t, err)
	wt, err := lw.Watch(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	events := collect(t, wt, 10*time.Second)
	require.Len(t, events, 1)
	assert.Equal(t, "good", events[0].Object.Name)
}

// The codec factory of the meta kinds serves both media types.
func TestMetadataCodecMediaTypes(t *testing.T) {
	for _, protobuf := range []bool{false, true} {
		c, err := newMetadataCodec[*metav1.PartialObjectMetadata](protobuf)
		require.NoError(t, err)
		assert.Equal(t, protobuf, c.fast != nil, "the protobuf fast path, for protobuf only")
		if protobuf {
			assert.True(t, c.fast.streamList, "a PartialObjectMetadataList is decoded as it arrives")
		}
	}
}
