package listwatch

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
)

// wire encodes objects and watch frames the way kube-apiserver does, in JSON or
// protobuf, so that tests can feed the decoders real bytes.
type wire struct {
	t        testing.TB
	scheme   *runtime.Scheme
	protobuf bool
	// gv is the group version objects are encoded in; zero means core v1.
	gv schema.GroupVersion
}

func newWire(t testing.TB, protobuf bool) *wire {
	s, err := NewScheme(corev1.AddToScheme)
	require.NoError(t, err)
	return &wire{t: t, scheme: s, protobuf: protobuf}
}

func (w *wire) mediaType() string {
	if w.protobuf {
		return mediaTypeProtobuf
	}
	return mediaTypeJSON
}

// object encodes obj (with its apiVersion/kind) in the wire's media type.
func (w *wire) object(obj runtime.Object) []byte {
	cf := serializer.NewCodecFactory(w.scheme)
	info, ok := runtime.SerializerInfoForMediaType(cf.SupportedMediaTypes(), w.mediaType())
	require.True(w.t, ok)
	gv := w.gv
	if gv.Empty() {
		gv = corev1.SchemeGroupVersion
	}
	b, err := runtime.Encode(cf.EncoderForVersion(info.Serializer, gv), obj)
	require.NoError(w.t, err)
	return b
}

// frame wraps raw object bytes in a watch event frame.
func (w *wire) frame(typ watch.EventType, raw []byte) []byte {
	we := metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: raw}}
	if w.protobuf {
		b, err := we.Marshal()
		require.NoError(w.t, err)
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
	}
	b, err := json.Marshal(we)
	require.NoError(w.t, err)
	return append(b, '\n')
}

// event encodes obj as a frame of the given type.
func (w *wire) event(typ watch.EventType, obj runtime.Object) []byte {
	return w.frame(typ, w.object(obj))
}

// corruptObject is a ConfigMap ns/name whose bytes decode far enough to read its
// metadata but not into a ConfigMap.
func (w *wire) corruptObject(name string) []byte {
	if !w.protobuf {
		return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"ns","name":"` + name + `"},"data":"not a map"}`)
	}
	inner, err := (&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}).Marshal()
	require.NoError(w.t, err)
	inner = append(inner, 0x17) // field 2 with the invalid wire type 7
	u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, Raw: inner}
	b, err := u.Marshal()
	require.NoError(w.t, err)
	return append(append([]byte(nil), protobufMagic...), b...)
}

func configMap(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv},
		Data:       map[string]string{"k": name},
	}
}

func secret(name, rv string) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv},
	}
}

type nopCloser struct{ io.Reader }

func (nopCloser) Close() error { return nil }

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func jsonEncode(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }
