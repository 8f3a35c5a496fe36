package deltafifo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/indexer"
)

func TestDeltaFIFOQueueOrder(t *testing.T) {
	f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{})
	require.NoError(t, f.Add(cm("ns", "a", "1")))
	require.NoError(t, f.Add(cm("ns", "b", "1")))
	require.NoError(t, f.Update(cm("ns", "a", "2")))
	require.NoError(t, f.Add(cm("ns", "c", "1")))
	require.NoError(t, f.Delete(cm("ns", "b", "2")))

	got := summaries(popAll(t, f))
	t.Run("a queued key keeps its place and a new key goes to the tail", func(t *testing.T) {
		require.Len(t, got, 3)
		assert.Equal(t, "Added:ns/a@1", got[0][0])
		assert.Equal(t, "Added:ns/b@1", got[1][0])
		assert.Equal(t, "Added:ns/c@1", got[2][0])
	})
	t.Run("a key's deltas are kept, oldest first", func(t *testing.T) {
		assert.Equal(t, []string{"Added:ns/a@1", "Updated:ns/a@2"}, got[0])
		assert.Equal(t, []string{"Added:ns/b@1", "Deleted:ns/b@2"}, got[1])
	})
	t.Run("a popped key is gone from the queue", func(t *testing.T) {
		assert.Empty(t, f.items)
		assert.Empty(t, f.queue)
	})
}

func TestDedupDeltas(t *testing.T) {
	obj := cm("ns", "a", "1")
	del := Delta[*corev1.ConfigMap]{Type: Deleted, Object: cm("ns", "a", "del")}
	tomb := Delta[*corev1.ConfigMap]{Type: Deleted, Object: cm("ns", "a", "tomb"),
		Tombstone: &indexer.DeletedFinalStateUnknown[*corev1.ConfigMap]{Key: "ns/a", Obj: obj}}
	tomb2 := tomb
	tomb2.Object = cm("ns", "a", "tomb2")
	upd := func(rv string) Delta[*corev1.ConfigMap] {
		return Delta[*corev1.ConfigMap]{Type: Updated, Object: cm("ns", "a", rv)}
	}
	tests := []struct {
		name string
		in   Deltas[*corev1.ConfigMap]
		want []string
	}{
		{"a single delta is kept", Deltas[*corev1.ConfigMap]{del}, []string{"Deleted:ns/a@del"}},
		{"two updates are both kept", Deltas[*corev1.ConfigMap]{upd("1"), upd("2")},
			[]string{"Updated:ns/a@1", "Updated:ns/a@2"}},
		{"two deletes become one", Deltas[*corev1.ConfigMap]{del, del}, []string{"Deleted:ns/a@del"}},
		{"a delete after a tombstone replaces the tombstone", Deltas[*corev1.ConfigMap]{tomb, del},
			[]string{"Deleted:ns/a@del"}},
		{"a tombstone after a delete is dropped", Deltas[*corev1.ConfigMap]{del, tomb},
			[]string{"Deleted:ns/a@del"}},
		{"of two tombstones the newer is kept", Deltas[*corev1.ConfigMap]{tomb, tomb2},
			[]string{"Deleted!:ns/a@tomb2"}},
		{"only the last two deltas are compared", Deltas[*corev1.ConfigMap]{del, upd("2"), del},
			[]string{"Deleted:ns/a@del", "Updated:ns/a@2", "Deleted:ns/a@del"}},
		{"a delete after an update is kept", Deltas[*corev1.ConfigMap]{upd("1"), del},
			[]string{"Updated:ns/a@1", "Deleted:ns/a@del"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, summary(dedupDeltas(tt.in)))
		})
	}
}

func TestDeltaFIFODedupThroughTheQueue(t *testing.T) {
	t.Run("a watch delete after a relist tombstone keeps only the watch delete", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{KnownObjects: newKnown(cm("ns", "a", "1"))})
		require.NoError(t, f.Replace(nil, "10"))
		require.NoError(t, f.Delete(cm("ns", "a", "2")))
		assert.Equal(t, [][]string{{"Deleted:ns/a@2"}}, summaries(popAll(t, f)))
	})
}

func TestDeltaFIFODelete(t *testing.T) {
	a := cm("ns", "a", "1")
	tests := []struct {
		name   string
		known  KnownObjects[*corev1.ConfigMap] // nil: no KnownObjects option
		queued bool                            // Add a before Delete
		want   [][]string
	}{
		{"a delete of a key neither queued nor known is dropped", newKnown(), false, nil},
		{"a delete without KnownObjects of an unqueued key is dropped", nil, false, nil},
		{"a delete of a queued key is kept", newKnown(), true, [][]string{{"Added:ns/a@1", "Deleted:ns/a@2"}}},
		{"a delete without KnownObjects of a queued key is kept", nil, true,
			[][]string{{"Added:ns/a@1", "Deleted:ns/a@2"}}},
		{"a delete of a known key is kept", newKnown(a), false, [][]string{{"Deleted:ns/a@2"}}},
		{"a delete is kept when KnownObjects fails", &known{getErr: errBoom}, false, [][]string{{"Deleted:ns/a@2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{KnownObjects: tt.known})
			if tt.queued {
				require.NoError(t, f.Add(a))
			}
			require.NoError(t, f.Delete(cm("ns", "a", "2")))
			assert.Equal(t, tt.want, summaries(popAll(t, f)))
		})
	}
}

func TestDeltaFIFOTransform(t *testing.T) {
	// The transform appends "+t" to the resource version, so a delta shows how many
	// times its object went through it.
	mark := func(o *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		c := o.DeepCopy()
		c.ResourceVersion += "+t"
		return c, nil
	}
	t.Run("it runs once on every watch event", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{Transform: mark})
		require.NoError(t, f.Add(cm("ns", "a", "1")))
		require.NoError(t, f.Update(cm("ns", "a", "2")))
		require.NoError(t, f.Delete(cm("ns", "a", "3")))
		assert.Equal(t, [][]string{{"Added:ns/a@1+t", "Updated:ns/a@2+t", "Deleted:ns/a@3+t"}},
			summaries(popAll(t, f)))
	})
	t.Run("it runs on listed items but not on tombstones", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{Transform: mark,
			KnownObjects: newKnown(cm("ns", "gone", "5+t"))})
		require.NoError(t, f.Replace([]*corev1.ConfigMap{cm("ns", "a", "1")}, "10"))
		assert.Equal(t, [][]string{{"Replaced:ns/a@1+t"}, {"Deleted!:ns/gone@5+t"}}, summaries(popAll(t, f)))
	})
	t.Run("it does not run on Sync deltas", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{Transform: mark,
			KnownObjects: newKnown(cm("ns", "a", "1+t"))})
		require.NoError(t, f.Resync())
		assert.Equal(t, [][]string{{"Sync:ns/a@1+t"}}, summaries(popAll(t, f)))
	})
	t.Run("its error is returned and nothing is queued", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{
			Transform: func(*corev1.ConfigMap) (*corev1.ConfigMap, error) { return nil, errBoom }})
		err := f.Add(cm("ns", "a", "1"))
		require.ErrorIs(t, err, ErrTransform)
		require.ErrorIs(t, err, errBoom)
		assert.Contains(t, err.Error(), `"ns/a"`)
		assert.Empty(t, f.queue)
	})
	t.Run("a nil result is an error, not a queued nil", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{
			Transform: func(*corev1.ConfigMap) (*corev1.ConfigMap, error) { return nil, nil }})
		require.ErrorIs(t, f.Update(cm("ns", "a", "1")), ErrTransform)
		assert.Empty(t, f.queue)
	})
}

func TestDeltaFIFOKeys(t *testing.T) {
	t.Run("a nil object is an error wrapping ErrKey and ErrNilObject", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{})
		for _, op := range []func(*corev1.ConfigMap) error{f.Add, f.Update, f.Delete} {
			err := op(nil)
			require.ErrorIs(t, err, ErrKey)
			require.ErrorIs(t, err, indexer.ErrNilObject)
		}
		assert.Empty(t, f.queue)
	})
	t.Run("a key function error is wrapped", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{
			KeyFunc: func(*corev1.ConfigMap) (string, error) { return "", errBoom }})
		err := f.Add(cm("ns", "a", "1"))
		require.ErrorIs(t, err, ErrKey)
		require.ErrorIs(t, err, errBoom)
	})
	t.Run("a custom key function decides the key", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{
			KeyFunc: func(o *corev1.ConfigMap) (string, error) { return o.Name, nil }})
		require.NoError(t, f.Add(cm("ns1", "a", "1")))
		require.NoError(t, f.Add(cm("ns2", "a", "2")))
		assert.Equal(t, []string{"a"}, f.queue)
	})
	t.Run("the queue's name is in its errors", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{Name: "pods"})
		assert.Contains(t, f.Add(nil).Error(), "pods")
	})
}

func TestDeltaFIFOKeyOf(t *testing.T) {
	f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{})
	obj := cm("ns", "a", "1")
	tests := []struct {
		name    string
		delta   Delta[*corev1.ConfigMap]
		want    string
		wantErr error
	}{
		{"an object's key comes from the key function", Delta[*corev1.ConfigMap]{Type: Updated, Object: obj}, "ns/a", nil},
		{"a tombstone's key is the tombstone's own key", Delta[*corev1.ConfigMap]{Type: Deleted, Object: obj,
			Tombstone: &indexer.DeletedFinalStateUnknown[*corev1.ConfigMap]{Key: "recorded/key", Obj: obj}}, "recorded/key", nil},
		{"a ReplacedAll has no key", Delta[*corev1.ConfigMap]{Type: ReplacedAll, Info: &Info[*corev1.ConfigMap]{}}, "", ErrKey},
		{"a SyncAll has no key", Delta[*corev1.ConfigMap]{Type: SyncAll}, "", ErrKey},
		{"a Bookmark has no key", Delta[*corev1.ConfigMap]{Type: Bookmark, Info: &Info[*corev1.ConfigMap]{}}, "", ErrKey},
		{"a delta without an object is an error, not a panic", Delta[*corev1.ConfigMap]{Type: Added}, "", indexer.ErrNilObject},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.KeyOf(tt.delta)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDeltaFIFOBookmarkIsIgnored(t *testing.T) {
	f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{})
	require.NoError(t, f.Bookmark("42"))
	assert.Empty(t, f.queue)
	assert.False(t, f.HasSynced(), "a bookmark is not an event and does not populate the queue")
}
