package listwatch

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A RESTListerWatcher sends ListOptions.ShardSelector as the query parameter
// shardSelector and reads the list's metadata.shardInfo.selector into
// ListResult.ShardSelector, in every decoder: typed JSON, typed protobuf (decoded as
// it streams in, liststream.go), unstructured JSON, and metadata-only in JSON and
// protobuf.
func TestAListReportsTheShardSelectorTheServerApplied(t *testing.T) {
	half := firstHalf(t)
	sel := half.String()
	applied := &metav1.ShardInfo{Selector: sel}
	for _, echo := range []bool{true, false} {
		info := applied
		if !echo {
			info = nil
		}
		want := map[bool]string{true: sel, false: ""}[echo]
		for _, protobuf := range []bool{false, true} {
			format := map[bool]string{false: "JSON", true: "protobuf"}[protobuf]
			t.Run(fmt.Sprintf("typed %s, shardInfo %v", format, echo), func(t *testing.T) {
				w := newWire(t, protobuf)
				list := &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"},
					ListMeta: metav1.ListMeta{ResourceVersion: "42", ShardInfo: info}, Items: []corev1.ConfigMap{*configMap("a", "40")}}
				srv := newFakeAPIServer(t, func(rw http.ResponseWriter, r *http.Request) {
					assert.Equal(t, sel, r.URL.Query().Get("shardSelector"))
					rw.Header().Set("Content-Type", w.mediaType())
					_, _ = rw.Write(w.object(list))
				})
				lw := newConfigMapLW(t, srv.URL, protobuf, nil)
				if protobuf {
					require.True(t, lw.codec.fast.streamList, "the protobuf case covers the streaming decoder")
				}
				res, err := lw.List(t.Context(), metav1.ListOptions{ShardSelector: sel})
				require.NoError(t, err)
				assert.Equal(t, want, res.ShardSelector)
				assert.Len(t, res.Items, 1)
			})
			t.Run(fmt.Sprintf("metadata %s, shardInfo %v", format, echo), func(t *testing.T) {
				w := metaWire(t, protobuf)
				list := &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadataList"},
					ListMeta: metav1.ListMeta{ResourceVersion: "42", ShardInfo: info}, Items: []metav1.PartialObjectMetadata{*partial("a", "40")}}
				srv := newFakeAPIServer(t, func(rw http.ResponseWriter, r *http.Request) {
					assert.Equal(t, sel, r.URL.Query().Get("shardSelector"))
					_, _ = rw.Write(w.object(list))
				})
				lw, err := New[*metav1.PartialObjectMetadata](newTestClient(t, srv.URL, corev1.SchemeGroupVersion), Options{Resource: "configmaps", Protobuf: protobuf})
				require.NoError(t, err)
				res, err := lw.List(t.Context(), metav1.ListOptions{ShardSelector: sel})
				require.NoError(t, err)
				assert.Equal(t, want, res.ShardSelector)
			})
		}
		t.Run(fmt.Sprintf("unstructured, shardInfo %v", echo), func(t *testing.T) {
			meta := `"resourceVersion":"5"`
			if echo {
				meta += `,"shardInfo":{"selector":"` + sel + `"}`
			}
			srv := newFakeAPIServer(t, func(rw http.ResponseWriter, r *http.Request) {
				assert.Equal(t, sel, r.URL.Query().Get("shardSelector"))
				rw.Header().Set("Content-Type", "application/json")
				_, _ = rw.Write([]byte(`{"apiVersion":"example.com/v1","kind":"FooList","metadata":{` + meta + `},"items":[]}`))
			})
			lw, err := New[*unstructured.Unstructured](newTestClient(t, srv.URL, schema.GroupVersion{Group: "example.com", Version: "v1"}), Options{Resource: "foos"})
			require.NoError(t, err)
			res, err := lw.List(t.Context(), metav1.ListOptions{ShardSelector: sel})
			require.NoError(t, err)
			assert.Equal(t, want, res.ShardSelector)
		})
	}
}
