package listwatch

import (
	"bytes"
	"fmt"
	"io"
	goruntime "runtime"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func configMapList(n int) *corev1.ConfigMapList {
	list := &corev1.ConfigMapList{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"},
		ListMeta: metav1.ListMeta{ResourceVersion: "99", Continue: "next-page"},
	}
	for i := range n {
		list.Items = append(list.Items, *richConfigMap(fmt.Sprintf("cm-%04d", i)))
	}
	return list
}

func protobufConfigMapCodec(t *testing.T) (*wire, *codec[*corev1.ConfigMap]) {
	w := newWire(t, true)
	c, err := newTypedCodec[*corev1.ConfigMap](w.scheme, corev1.SchemeGroupVersion, true)
	require.NoError(t, err)
	require.True(t, c.fast.streamList, "generated lists stream")
	return w, c
}

// The streaming decoder gives what decoding the whole body gives, however the body
// arrives (one byte at a time included), each item in its own allocation.
func TestAProtobufListDecodedAsItArrivesEqualsTheWholeBodyDecoded(t *testing.T) {
	w, c := protobufConfigMapCodec(t)
	for _, n := range []int{0, 1, 3} {
		body := w.object(configMapList(n))
		want, err := c.decodeList(body)
		require.NoError(t, err)
		for name, r := range map[string]io.Reader{
			"whole":        bytes.NewReader(body),
			"byte by byte": iotest.OneByteReader(bytes.NewReader(body)),
			"in halves":    iotest.HalfReader(bytes.NewReader(body)),
		} {
			t.Run(fmt.Sprintf("%d items, %s", n, name), func(t *testing.T) {
				got, err := c.decodeListStream(r)
				require.NoError(t, err)
				assert.Equal(t, want, got)
				assert.Equal(t, "99", got.ResourceVersion)
				assert.Equal(t, "next-page", got.Continue)
				for i := 1; i < len(got.Items); i++ {
					assert.NotSame(t, got.Items[i-1], got.Items[i])
				}
			})
		}
	}
}

// What the streaming decoder does not recognise as its list is decoded whole, with the
// same result or error as before; a body that breaks off or lies about a length is an
// error, never a panic or a short list.
func TestAProtobufListStreamFallsBackOrFailsClearly(t *testing.T) {
	w, c := protobufConfigMapCodec(t)
	body := w.object(configMapList(3))

	t.Run("another kind goes to the whole-body decoder", func(t *testing.T) {
		other := w.object(&corev1.SecretList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "SecretList"}, Items: []corev1.Secret{*secret("s", "1")}})
		_, err := c.decodeListStream(bytes.NewReader(other))
		_, want := c.decodeList(other)
		require.Error(t, err)
		assert.Equal(t, want.Error(), err.Error())
	})
	t.Run("JSON goes to the whole-body decoder", func(t *testing.T) {
		_, err := c.decodeListStream(bytes.NewReader([]byte(`{"kind":"ConfigMapList"}`)))
		require.Error(t, err)
	})
	for _, cut := range []int{5, len(body) / 2, len(body) - 1} {
		t.Run(fmt.Sprintf("a body cut after %d bytes", cut), func(t *testing.T) {
			_, err := c.decodeListStream(bytes.NewReader(body[:cut]))
			require.Error(t, err)
		})
	}
	t.Run("an item longer than the list", func(t *testing.T) {
		// Field 2 (an item) claiming 1000 bytes, with 10 behind it.
		raw := append([]byte{0x12, 0xe8, 0x07}, make([]byte, 10)...)
		u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"}, Raw: raw}
		b, err := u.Marshal()
		require.NoError(t, err)
		_, err = c.decodeListStream(bytes.NewReader(append(append([]byte(nil), protobufMagic...), b...)))
		require.ErrorIs(t, err, errMalformedProtobuf)
	})
}

// Deployments (another group) stream too: the layout check is per list type.
func TestAppsListsStream(t *testing.T) {
	s, err := NewScheme(appsv1.AddToScheme)
	require.NoError(t, err)
	c, err := newTypedCodec[*appsv1.Deployment](s, appsv1.SchemeGroupVersion, true)
	require.NoError(t, err)
	assert.True(t, c.fast.streamList)
	assert.Equal(t, "apps/v1", c.fast.apiVersion)
	assert.False(t, streamsList(&struct{ Items []int }{}), "a type without the protobuf layout is decoded whole")
}

// Streaming never holds the body: for a list of a few MB it allocates less than the
// body's size below what decoding the whole body (read as client-go reads it) does.
func TestAProtobufListStreamAllocatesLessThanTheBody(t *testing.T) {
	w, c := protobufConfigMapCodec(t)
	body := w.object(configMapList(3000))
	allocated := func(f func()) uint64 {
		var before, after goruntime.MemStats
		goruntime.GC()
		goruntime.ReadMemStats(&before)
		f()
		goruntime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	streamed := allocated(func() {
		_, err := c.decodeListStream(bytes.NewReader(body))
		require.NoError(t, err)
	})
	whole := allocated(func() {
		b, err := io.ReadAll(bytes.NewReader(body))
		require.NoError(t, err)
		_, err = c.decodeList(b)
		require.NoError(t, err)
	})
	t.Logf("body %d bytes; allocated: streamed %d, whole %d", len(body), streamed, whole)
	assert.Less(t, streamed+uint64(len(body)), whole)
}
