package listwatch

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/reflector"
)

// richConfigMap has every kind of field a decoder can get wrong: strings, maps,
// bytes, a timestamp, owner references and managed fields.
func richConfigMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "42", Generation: 3,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 26, 3, 4, 5, 0, time.UTC)),
			Labels:            map[string]string{"app": "web", "tier": "front"},
			Annotations:       map[string]string{"note": "ünïcode ✓"},
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d-1", Controller: ptr.To(true)}},
			Finalizers:        []string{"example.com/keep"},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
				FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:k":{}}}`),
			}},
		},
		Data:       map[string]string{"k": "v", "empty": ""},
		BinaryData: map[string][]byte{"bin": {0, 1, 2, 0xff}},
		Immutable:  ptr.To(false),
	}
}

func richPod(name string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "7", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			NodeName: "node-1",
			Containers: []corev1.Container{{
				Name: "c", Image: "nginx:1", Args: []string{"-v"},
				Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi"),
				}},
			}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}}},
	}
}

// slowDecode is the serializer's path the fast one replaces.
func slowDecode[T reflector.Object](t *testing.T, c *codec[T], raw []byte) T {
	t.Helper()
	obj, _, err := c.objects.Decode(raw, nil, c.newObject())
	require.NoError(t, err)
	return obj.(T)
}

// The fast path decodes to exactly what the serializer decodes, for watch events and
// lists, and it is taken: it allocates less.
func TestProtobufObjectsDecodeWithoutCopyingToWhatTheSerializerDecodes(t *testing.T) {
	w := newWire(t, true)
	c, err := newTypedCodec[*corev1.ConfigMap](w.scheme, corev1.SchemeGroupVersion, true)
	require.NoError(t, err)
	require.NotNil(t, c.fast, "a generated type in protobuf gets the fast path")

	for _, typ := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark} {
		cm := richConfigMap("a")
		frame := w.event(typ, cm)[4:] // the frame without its length prefix
		ev, err := c.decodeEvent(frame)
		require.NoError(t, err)
		assert.Equal(t, typ, ev.Type)
		_, raw, err := unwrapWatchEvent(frame)
		require.NoError(t, err)
		assert.Equal(t, slowDecode(t, c, raw), ev.Object, "%s: the same object as the serializer's", typ)
		assert.Empty(t, ev.Object.Kind, "apiVersion and kind are cleared, as client-go's typed clients do")
	}

	t.Run("a list body", func(t *testing.T) {
		list := &corev1.ConfigMapList{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"},
			ListMeta: metav1.ListMeta{ResourceVersion: "99", Continue: "next"},
			Items:    []corev1.ConfigMap{*richConfigMap("a"), *richConfigMap("b")},
		}
		body := w.object(list)
		got, err := c.decodeList(body)
		require.NoError(t, err)
		obj, _, err := c.objects.Decode(body, nil, c.newList())
		require.NoError(t, err)
		want, err := itemsOf[*corev1.ConfigMap](obj)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		assert.Equal(t, "99", got.ResourceVersion)
		assert.Equal(t, "next", got.Continue)
	})

	t.Run("another type: Pods", func(t *testing.T) {
		pods, err := newTypedCodec[*corev1.Pod](w.scheme, corev1.SchemeGroupVersion, true)
		require.NoError(t, err)
		frame := w.event(watch.Added, richPod("p"))[4:]
		ev, err := pods.decodeEvent(frame)
		require.NoError(t, err)
		_, raw, _ := unwrapWatchEvent(frame)
		assert.Equal(t, slowDecode(t, pods, raw), ev.Object)
		assert.Equal(t, "250m", ev.Object.Spec.Containers[0].Resources.Requests.Cpu().String())
	})

	t.Run("the decoded object does not alias the frame", func(t *testing.T) {
		frame := w.event(watch.Added, richConfigMap("a"))[4:]
		ev, err := c.decodeEvent(frame)
		require.NoError(t, err)
		clear(frame) // the stream reuses its buffer for the next frame
		assert.Equal(t, "v", ev.Object.Data["k"])
		assert.Equal(t, []byte{0, 1, 2, 0xff}, ev.Object.BinaryData["bin"])
		assert.Equal(t, `{"f:data":{"f:k":{}}}`, ev.Object.ManagedFields[0].FieldsV1.GetRawString())
	})

	t.Run("it allocates less than the serializer's path", func(t *testing.T) {
		frame := w.event(watch.Modified, richConfigMap("a"))[4:]
		fast := testing.AllocsPerRun(100, func() { _, _ = c.decodeEvent(frame) })
		slow := testing.AllocsPerRun(100, func() {
			var we metav1.WatchEvent
			_ = we.Unmarshal(frame)
			_, _, _ = c.objects.Decode(we.Object.Raw, nil, c.newObject())
		})
		t.Logf("allocations per event: fast %v, serializer %v", fast, slow)
		assert.LessOrEqual(t, fast, slow-3, "no copies of the type, the RawExtension, the Unknown and its TypeMeta")
	})
}

// Whatever the fast path does not recognise goes to the serializer, with its result
// or its error: another kind (a Status), an encoded envelope, a malformed one.
func TestProtobufEnvelopesTheFastPathDoesNotTakeGoToTheSerializer(t *testing.T) {
	w := newWire(t, true)
	c, err := newTypedCodec[*corev1.ConfigMap](w.scheme, corev1.SchemeGroupVersion, true)
	require.NoError(t, err)
	inner, err := richConfigMap("a").Marshal()
	require.NoError(t, err)
	envelope := func(u runtime.Unknown) []byte {
		b, err := u.Marshal()
		require.NoError(t, err)
		return append(append([]byte(nil), protobufMagic...), b...)
	}
	for name, raw := range map[string][]byte{
		"a Secret where a ConfigMap is expected": w.object(secret("s", "1")),
		"another apiVersion":                     envelope(runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v2", Kind: "ConfigMap"}, Raw: inner}),
		"a content encoding":                     envelope(runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, Raw: inner, ContentEncoding: "gzip"}),
		"no magic":                               inner,
		"a truncated envelope":                   w.object(richConfigMap("a"))[:20],
	} {
		t.Run(name, func(t *testing.T) {
			ok, err := c.fast.decode(raw, c.fast.kind, &corev1.ConfigMap{})
			assert.False(t, ok)
			assert.NoError(t, err)
			serializerOnly := *c
			serializerOnly.fast = nil
			_, slowErr := serializerOnly.decodeObject(raw)
			_, fastErr := c.decodeObject(raw)
			assert.Equal(t, slowErr != nil, fastErr != nil, "the same outcome as the serializer: %v / %v", slowErr, fastErr)
		})
	}
}

// eachField never panics and never reads past its input, and neither does the list
// stream decoder, whatever the bytes.
func FuzzProtobufFields(f *testing.F) {
	w := newWire(f, true)
	f.Add(w.event(watch.Added, richConfigMap("a"))[4:])
	f.Add(w.object(richPod("p")))
	f.Add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{0x0b})
	f.Add(w.object(configMapList(2)))
	c, err := newTypedCodec[*corev1.ConfigMap](w.scheme, corev1.SchemeGroupVersion, true)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if res, err := c.decodeListStream(bytes.NewReader(data)); err == nil {
			for _, item := range res.Items {
				if item == nil {
					t.Fatal("a nil item in a list that decoded")
				}
			}
		}
		_ = eachField(data, func(_ int, v []byte) error {
			if len(v) > len(data) {
				t.Fatalf("a field of %d bytes in %d bytes of input", len(v), len(data))
			}
			return nil
		})
		_, _ = unwrapEnvelope(data)
		_, _, _ = unwrapWatchEvent(data)
	})
}
