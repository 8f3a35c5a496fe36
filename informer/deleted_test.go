package informer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
)

// A DeletedObject names the deleted object in every case a delete handler can meet —
// seen, inferred with a tombstone, or built by hand with nothing in it — and never
// fails or panics doing so.
func TestDeletedObjectNamesTheObjectWhateverItHolds(t *testing.T) {
	type deleted = informer.DeletedObject[*corev1.ConfigMap]
	tomb := func(key string, obj *corev1.ConfigMap) *indexer.DeletedFinalStateUnknown[*corev1.ConfigMap] {
		return &indexer.DeletedFinalStateUnknown[*corev1.ConfigMap]{Key: key, Obj: obj}
	}
	clusterScoped := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "everywhere"}}
	cases := []struct {
		name    string
		d       deleted
		wantKey string
		want    indexer.ObjectName
	}{
		{"a delete seen as an event is named by its object",
			deleted{OptionalObj: cm("gone")}, "ns/gone", indexer.ObjectName{Namespace: "ns", Name: "gone"}},
		{"a cluster-scoped object has no namespace and is keyed by its name",
			deleted{OptionalObj: clusterScoped}, "everywhere", indexer.ObjectName{Name: "everywhere"}},
		{"with a tombstone its key wins over the object's own name",
			deleted{OptionalObj: cm("stale"), FinalStateUnknown: tomb("ns/cached", cm("stale"))}, "ns/cached", indexer.ObjectName{Namespace: "ns", Name: "cached"}},
		{"a tombstone without an object is still named by its key",
			deleted{FinalStateUnknown: tomb("ns/only-key", nil)}, "ns/only-key", indexer.ObjectName{Namespace: "ns", Name: "only-key"}},
		{"a tombstone key without a slash is a cluster-scoped name",
			deleted{FinalStateUnknown: tomb("node-1", nil)}, "node-1", indexer.ObjectName{Name: "node-1"}},
		{"a tombstone key with two slashes is no error: the rest is the name",
			deleted{FinalStateUnknown: tomb("a/b/c", nil)}, "a/b/c", indexer.ObjectName{Namespace: "a", Name: "b/c"}},
		{"an empty DeletedObject gives empty names and an empty key, without a panic",
			deleted{}, "", indexer.ObjectName{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.NotPanics(t, func() {
				assert.Equal(t, c.wantKey, c.d.GetKey(), "GetKey")
				assert.Equal(t, c.want, c.d.GetObjectName(), "GetObjectName")
				assert.Equal(t, c.want.Name, c.d.GetName(), "GetName")
				assert.Equal(t, c.want.Namespace, c.d.GetNamespace(), "GetNamespace")
			})
		})
	}
	t.Run("a nil unstructured object is handled like a nil typed one", func(t *testing.T) {
		var d informer.DeletedObject[*unstructured.Unstructured]
		assert.NotPanics(t, func() {
			assert.Empty(t, d.GetKey())
			assert.Equal(t, indexer.ObjectName{}, d.GetObjectName())
		})
	})
	t.Run("the key of an object is what MetaNamespaceKeyFunc gives", func(t *testing.T) {
		obj := cm("same")
		want, err := indexer.MetaNamespaceKeyFunc(obj)
		assert.NoError(t, err)
		d := deleted{OptionalObj: obj}
		assert.Equal(t, want, d.GetKey())
		assert.Equal(t, want, d.GetObjectName().String())
	})
}
