package deltafifo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/indexer"
)

func TestRealFIFOKeepsEveryEventInOrder(t *testing.T) {
	f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
	require.NoError(t, f.Add(cm("ns", "a", "1")))
	require.NoError(t, f.Add(cm("ns", "b", "1")))
	require.NoError(t, f.Update(cm("ns", "a", "2")))
	require.NoError(t, f.Delete(cm("ns", "a", "3")))
	require.NoError(t, f.Delete(cm("ns", "never-seen", "1")))
	assert.Equal(t, [][]string{
		{"Added:ns/a@1"}, {"Added:ns/b@1"}, {"Updated:ns/a@2"}, {"Deleted:ns/a@3"}, {"Deleted:ns/never-seen@1"},
	}, summaries(popAll(t, f)), "one delta per event, in arrival order, deletes never dropped")
}

func TestRealFIFOReplace(t *testing.T) {
	a, b := cm("ns", "a", "1"), cm("ns", "b", "1")
	t.Run("Replace queues one ReplacedAll with the list and its resource version", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
		require.NoError(t, f.Add(cm("ns", "gone", "1")))
		require.NoError(t, f.Replace(cmList{a, b}, "10"))
		assert.Equal(t, [][]string{{"Added:ns/gone@1"}, {"ReplacedAll@10[ns/a,ns/b]"}}, summaries(popAll(t, f)),
			"no tombstones: the consumer diffs the list against its store")
	})
	t.Run("without a transform the delta holds the caller's slice", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
		list := cmList{a, b}
		require.NoError(t, f.Replace(list, "10"))
		got := popOne(t, f).deltas[0].Info.Objects
		assert.Same(t, &list[0], &got[0])
	})
	t.Run("with a transform the objects are transformed into a new slice", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{Transform: func(o *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			return cm(o.Namespace, o.Name, o.ResourceVersion+"+t"), nil
		}})
		list := cmList{a, b}
		require.NoError(t, f.Replace(list, "10"))
		got := popOne(t, f).deltas[0].Info.Objects
		assert.Equal(t, "1+t", got[0].ResourceVersion)
		assert.Equal(t, "1+t", got[1].ResourceVersion)
		assert.Same(t, a, list[0], "the caller's slice is untouched")
	})
	t.Run("a nil item fails Replace and queues nothing", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
		err := f.Replace(cmList{a, nil}, "10")
		require.ErrorIs(t, err, ErrKey)
		require.ErrorIs(t, err, indexer.ErrNilObject)
		assert.Empty(t, f.items)
		assert.False(t, f.HasSynced())
	})
	t.Run("a transform error fails Replace and queues nothing", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{
			Transform: func(*corev1.ConfigMap) (*corev1.ConfigMap, error) { return nil, errBoom }})
		err := f.Replace(cmList{a}, "10")
		require.ErrorIs(t, err, ErrTransform)
		require.ErrorIs(t, err, errBoom)
		assert.Empty(t, f.items)
	})
}

func TestRealFIFOResyncAndBookmark(t *testing.T) {
	t.Run("Resync queues one SyncAll, even on an empty queue", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
		require.NoError(t, f.Resync())
		assert.Equal(t, [][]string{{"SyncAll"}}, summaries(popAll(t, f)))
	})
	t.Run("Bookmark queues a Bookmark delta in order when EmitBookmark is set", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{EmitBookmark: true})
		require.NoError(t, f.Add(cm("ns", "a", "1")))
		require.NoError(t, f.Bookmark("7"))
		require.NoError(t, f.Add(cm("ns", "b", "8")))
		assert.Equal(t, [][]string{{"Added:ns/a@1"}, {"Bookmark@7"}, {"Added:ns/b@8"}}, summaries(popAll(t, f)))
	})
	t.Run("Bookmark does nothing when EmitBookmark is not set", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
		require.NoError(t, f.Bookmark("7"))
		assert.Empty(t, f.items)
	})
	t.Run("deltas queued before the first Replace count towards the initial list", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{EmitBookmark: true})
		require.NoError(t, f.Bookmark("1"))
		require.NoError(t, f.Replace(cmList{cm("ns", "a", "1")}, "2"))
		first := popOne(t, f)
		assert.True(t, first.isInInitialList)
		assert.False(t, f.HasSynced(), "synced after the Bookmark, before the ReplacedAll")
		second := popOne(t, f)
		assert.True(t, second.isInInitialList)
		assert.True(t, f.HasSynced())
	})
}

func TestRealFIFOEvents(t *testing.T) {
	t.Run("the transform runs once on every event", func(t *testing.T) {
		calls := 0
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{Transform: func(o *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			calls++
			return cm(o.Namespace, o.Name, o.ResourceVersion+"+t"), nil
		}})
		require.NoError(t, f.Add(cm("ns", "a", "1")))
		require.NoError(t, f.Update(cm("ns", "a", "2")))
		require.NoError(t, f.Delete(cm("ns", "a", "3")))
		assert.Equal(t, [][]string{{"Added:ns/a@1+t"}, {"Updated:ns/a@2+t"}, {"Deleted:ns/a@3+t"}}, summaries(popAll(t, f)))
		assert.Equal(t, 3, calls)
	})
	t.Run("a transform error is returned and nothing is queued", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{
			Transform: func(*corev1.ConfigMap) (*corev1.ConfigMap, error) { return nil, errBoom }})
		require.ErrorIs(t, f.Add(cm("ns", "a", "1")), errBoom)
		assert.Empty(t, f.items)
	})
	t.Run("an object without a key is an error and nothing is queued", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{})
		err := f.Add(nil)
		require.ErrorIs(t, err, ErrKey)
		require.ErrorIs(t, err, indexer.ErrNilObject)
		assert.Empty(t, f.items)
	})
	t.Run("the queue's name is in its errors", func(t *testing.T) {
		f := NewRealFIFO(RealFIFOOptions[*corev1.ConfigMap]{Name: "pods"})
		assert.Contains(t, f.Update(nil).Error(), "pods")
	})
}
