package listwatch

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeinternals/informers/internal/objects"
	"github.com/kubeinternals/informers/reflector"
)

// FuzzWatchDecoding feeds arbitrary bytes to the watch decoders: as one frame to
// decodeEvent, and as a whole response body to the stream goroutine, for typed
// JSON, typed protobuf and unstructured JSON. Whatever the input, decoding must not
// panic, must end, and every event it emits must be well formed; decoding the body
// concurrently must emit the same events.
//
// Run: go test -fuzz FuzzWatchDecoding ./reflector/
func FuzzWatchDecoding(f *testing.F) {
	for _, protobuf := range []bool{false, true} {
		w := newWire(f, protobuf)
		gone := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired}
		f.Add(w.event(watch.Added, configMap("a", "1")))
		f.Add(w.event(watch.Added, secret("s", "2")))
		f.Add(w.event(watch.Error, &gone))
		f.Add(w.frame(watch.Modified, w.corruptObject("bad")))
		f.Add(append(w.event(watch.Bookmark, configMap("", "9")), w.event(watch.Deleted, configMap("a", "3"))...))
	}
	f.Add([]byte(`{"type":"ADDED","object":{"apiVersion":"example.com/v1","kind":"Foo","metadata":{"name":"x"}}}`))
	f.Add([]byte(`{"type":"ADDED","object":null}`))
	f.Add([]byte{0, 0, 0, 4, 'k', '8', 's', 0})

	scheme, err := NewScheme(corev1.AddToScheme)
	if err != nil {
		f.Fatal(err)
	}
	typedJSON, err := newTypedCodec[*corev1.ConfigMap](scheme, corev1.SchemeGroupVersion, false)
	if err != nil {
		f.Fatal(err)
	}
	typedProto, err := newTypedCodec[*corev1.ConfigMap](scheme, corev1.SchemeGroupVersion, true)
	if err != nil {
		f.Fatal(err)
	}
	unstructuredJSON, err := newUnstructuredCodec[*unstructured.Unstructured]()
	if err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		checkCodec(t, typedJSON, data)
		checkCodec(t, typedProto, data)
		checkCodec(t, unstructuredJSON, data)
	})
}

func checkCodec[T reflector.Object](t *testing.T, c *codec[T], data []byte) {
	if ev, err := c.decodeEvent(data); err == nil {
		checkEvent(t, ev)
	} else if _, ok := err.(*DecodeError); !ok {
		t.Fatalf("decodeEvent returned %T, want *DecodeError", err)
	}
	// The body through the sequential and the concurrent decoding: the same events.
	var seen [2][]reflector.Event[T]
	for i, decoders := range []int{1, 3} {
		_, cancel := context.WithCancel(context.Background())
		w := startStreamWatch(io.NopCloser(bytes.NewReader(data)), cancel, c, slog.New(slog.DiscardHandler), decoders)
		for ev := range w.ResultChan() {
			checkEvent(t, ev)
			seen[i] = append(seen[i], ev)
		}
		w.Stop()
	}
	if !reflect.DeepEqual(seen[0], seen[1]) {
		t.Fatalf("sequential and concurrent decoding differ:\n%v\n%v", seen[0], seen[1])
	}
}

func checkEvent[T reflector.Object](t *testing.T, ev reflector.Event[T]) {
	switch ev.Type {
	case watch.Error:
		if ev.Status == nil {
			t.Fatal("an Error event without a Status")
		}
		if err := apierrors.FromObject(ev.Status); err == nil {
			t.Fatal("an Error event whose status is not an error")
		}
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
		if objects.IsNil(ev.Object) {
			t.Fatalf("a %s event without an object", ev.Type)
		}
		_ = ev.Object.GetResourceVersion()
	default:
		t.Fatalf("an event of unknown type %q", ev.Type)
	}
}
