package deltafifo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/indexer"
)

type cmList = []*corev1.ConfigMap

func TestDeltaFIFOReplace(t *testing.T) {
	a, b := cm("ns", "a", "1"), cm("ns", "b", "1")
	tests := []struct {
		name    string
		known   *known
		before  func(f *DeltaFIFO[*corev1.ConfigMap]) // events queued before the Replace
		list    cmList
		want    [][]string
		wantLog string
	}{
		{
			name: "every listed item gets a Replaced delta, in list order",
			list: cmList{a, b},
			want: [][]string{{"Replaced:ns/a@1"}, {"Replaced:ns/b@1"}},
		},
		{
			name:   "a listed key that is queued keeps its place and gets Replaced after its deltas",
			before: func(f *DeltaFIFO[*corev1.ConfigMap]) { require.NoError(t, f.Add(cm("ns", "b", "0"))) },
			list:   cmList{a, b},
			want:   [][]string{{"Added:ns/b@0", "Replaced:ns/b@1"}, {"Replaced:ns/a@1"}},
		},
		{
			name: "a queued key missing from the list gets a tombstone with its newest queued object",
			before: func(f *DeltaFIFO[*corev1.ConfigMap]) {
				require.NoError(t, f.Add(cm("ns", "x", "1")))
				require.NoError(t, f.Update(cm("ns", "x", "2")))
			},
			list: cmList{a},
			want: [][]string{{"Added:ns/x@1", "Updated:ns/x@2", "Deleted!:ns/x@2"}, {"Replaced:ns/a@1"}},
		},
		{
			name:  "a known key missing from the list gets a tombstone with the known object",
			known: newKnown(cm("ns", "y", "5")),
			list:  cmList{a},
			want:  [][]string{{"Replaced:ns/a@1"}, {"Deleted!:ns/y@5"}},
		},
		{
			name:   "a known key with queued deltas gets one tombstone, with the queued object",
			known:  newKnown(cm("ns", "y", "5")),
			before: func(f *DeltaFIFO[*corev1.ConfigMap]) { require.NoError(t, f.Update(cm("ns", "y", "6"))) },
			want:   [][]string{{"Updated:ns/y@6", "Deleted!:ns/y@6"}},
		},
		{
			name:  "a listed known key gets no tombstone",
			known: newKnown(cm("ns", "a", "0")),
			list:  cmList{a},
			want:  [][]string{{"Replaced:ns/a@1"}},
		},
		{
			name:   "a queued delete followed by a relist without the key stays one delete",
			before: func(f *DeltaFIFO[*corev1.ConfigMap]) { require.NoError(t, f.Add(a)); require.NoError(t, f.Delete(a)) },
			want:   [][]string{{"Added:ns/a@1", "Deleted:ns/a@1"}},
		},
		{
			name:  "a second relist without the key does not add a second tombstone",
			known: newKnown(cm("ns", "y", "5")),
			before: func(f *DeltaFIFO[*corev1.ConfigMap]) {
				require.NoError(t, f.Replace(nil, "9"))
			},
			want: [][]string{{"Deleted!:ns/y@5"}},
		},
		{
			name:    "a known key that vanished before GetByKey is skipped and logged",
			known:   &known{objs: map[string]*corev1.ConfigMap{}, ghosts: []string{"ns/ghost"}},
			list:    cmList{a},
			want:    [][]string{{"Replaced:ns/a@1"}},
			wantLog: "key=ns/ghost",
		},
		{
			name:    "a known key whose lookup fails is skipped and logged",
			known:   &known{objs: map[string]*corev1.ConfigMap{"ns/y": cm("ns", "y", "5")}, getErr: errBoom},
			want:    nil,
			wantLog: "error=boom",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs logBuffer
			opts := DeltaFIFOOptions[*corev1.ConfigMap]{Logger: testLogger(&logs)}
			if tt.known != nil {
				opts.KnownObjects = tt.known
			}
			f := NewDeltaFIFO(opts)
			if tt.before != nil {
				tt.before(f)
			}
			require.NoError(t, f.Replace(tt.list, "10"))
			assert.Equal(t, tt.want, summaries(popAll(t, f)))
			if tt.wantLog != "" {
				assert.Contains(t, logs.String(), tt.wantLog)
			}
		})
	}
}

func TestDeltaFIFOReplaceErrors(t *testing.T) {
	t.Run("an item without a key fails Replace and queues nothing", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{KnownObjects: newKnown(cm("ns", "y", "1"))})
		err := f.Replace(cmList{cm("ns", "a", "1"), nil}, "10")
		require.ErrorIs(t, err, ErrKey)
		assert.Contains(t, err.Error(), "item 1")
		assert.Empty(t, f.queue)
		assert.False(t, f.HasSynced(), "a failed Replace does not populate the queue")
	})
	t.Run("a transform error fails Replace, and the items before it stay queued (as in client-go)", func(t *testing.T) {
		f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{
			Transform: func(obj *corev1.ConfigMap) (*corev1.ConfigMap, error) {
				if obj.Name == "b" {
					return nil, errBoom
				}
				return obj, nil
			}})
		require.ErrorIs(t, f.Replace(cmList{cm("ns", "a", "1"), cm("ns", "b", "1"), cm("ns", "c", "1")}, "10"), errBoom)
		assert.Equal(t, []string{"ns/a"}, f.queue)
	})
}

// TestDeltaFIFOReplace83810 reproduces kubernetes/kubernetes#83810: an object is
// deleted while the watch is down, so no DELETED event ever arrives; the relist that
// follows no longer contains it, and the consumer must still be told it is gone —
// whether the consumer already has it, has a newer state of it still queued, or has
// not seen it at all. The consumer here is what an informer does: it applies every
// popped delta to the store that is also the queue's KnownObjects.
func TestDeltaFIFOReplace83810(t *testing.T) {
	tests := []struct {
		name string
		// watch feeds the events that arrive before the watch breaks, popping
		// some of them into the consumer's store.
		watch     func(f *DeltaFIFO[*corev1.ConfigMap], store *known)
		wantDelta string // the last delta delivered for ns/gone
	}{
		{
			name: "an object the consumer has gets a Deleted delta on relist",
			watch: func(f *DeltaFIFO[*corev1.ConfigMap], store *known) {
				require.NoError(t, f.Add(cm("ns", "gone", "1")))
				drainInto(t, f, store)
			},
			wantDelta: "Deleted!:ns/gone@1",
		},
		{
			name: "an object the consumer has, with a newer state queued, gets a Deleted delta with that state",
			watch: func(f *DeltaFIFO[*corev1.ConfigMap], store *known) {
				require.NoError(t, f.Add(cm("ns", "gone", "1")))
				drainInto(t, f, store)
				require.NoError(t, f.Update(cm("ns", "gone", "2")))
			},
			wantDelta: "Deleted!:ns/gone@2",
		},
		{
			name: "an object the consumer has not seen yet gets a Deleted delta on relist",
			watch: func(f *DeltaFIFO[*corev1.ConfigMap], store *known) {
				require.NoError(t, f.Add(cm("ns", "gone", "1")))
			},
			wantDelta: "Deleted!:ns/gone@1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newKnown()
			f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{KnownObjects: store})
			require.NoError(t, f.Replace(cmList{cm("ns", "stays", "1")}, "1"))
			drainInto(t, f, store)

			tt.watch(f, store)
			// The watch breaks; ns/gone is deleted meanwhile; the relist misses it.
			require.NoError(t, f.Replace(cmList{cm("ns", "stays", "1")}, "5"))

			var forGone []string
			for _, p := range popAll(t, f) {
				for _, d := range p.deltas {
					k, err := f.KeyOf(d)
					require.NoError(t, err)
					if k == "ns/gone" {
						forGone = append(forGone, summary(Deltas[*corev1.ConfigMap]{d})...)
					}
				}
				apply(store, p.deltas)
			}
			require.NotEmpty(t, forGone, "no delta at all for the deleted object")
			assert.Equal(t, tt.wantDelta, forGone[len(forGone)-1])
			assert.NotContains(t, store.objs, "ns/gone", "the consumer still has the deleted object")
			assert.Contains(t, store.objs, "ns/stays")
		})
	}
}

// apply does to store what an informer does with popped deltas.
func apply(store *known, deltas Deltas[*corev1.ConfigMap]) {
	for _, d := range deltas {
		switch d.Type {
		case Deleted:
			delete(store.objs, key(d.Object))
		default:
			store.objs[key(d.Object)] = d.Object
		}
	}
}

// drainInto pops everything and applies it to store.
func drainInto(t *testing.T, f *DeltaFIFO[*corev1.ConfigMap], store *known) {
	t.Helper()
	for _, p := range popAll(t, f) {
		apply(store, p.deltas)
	}
}

func TestDeltaFIFOTombstoneIsTyped(t *testing.T) {
	f := NewDeltaFIFO(DeltaFIFOOptions[*corev1.ConfigMap]{KnownObjects: newKnown(cm("ns", "a", "7"))})
	require.NoError(t, f.Replace(nil, "10"))
	got := popOne(t, f)
	require.Len(t, got.deltas, 1)
	d := got.deltas[0]
	assert.Equal(t, Deleted, d.Type)
	require.NotNil(t, d.Tombstone)
	assert.Equal(t, indexer.DeletedFinalStateUnknown[*corev1.ConfigMap]{Key: "ns/a", Obj: d.Object}, *d.Tombstone)
	assert.Equal(t, "7", d.Object.ResourceVersion, "Object is the last known state, never nil")
}

func TestDeltaFIFOResync(t *testing.T) {
	tests := []struct {
		name    string
		known   *known
		before  func(f *DeltaFIFO[*corev1.ConfigMap])
		want    [][]string
		wantLog string
	}{
		{
			name:  "every known key with nothing queued gets a Sync with the known object",
			known: newKnown(cm("ns", "a", "1"), cm("ns", "b", "1")),
			want:  [][]string{{"Sync:ns/a@1"}, {"Sync:ns/b@1"}},
		},
		{
			name:   "a known key with pending deltas gets no Sync",
			known:  newKnown(cm("ns", "a", "1"), cm("ns", "b", "1")),
			before: func(f *DeltaFIFO[*corev1.ConfigMap]) { require.NoError(t, f.Update(cm("ns", "a", "2"))) },
			want:   [][]string{{"Updated:ns/a@2"}, {"Sync:ns/b@1"}},
		},
		{
			name: "without KnownObjects Resync does nothing",
			want: nil,
		},
		{
			name:    "a known key that vanished before GetByKey is skipped and logged",
			known:   &known{objs: map[string]*corev1.ConfigMap{}, ghosts: []string{"ns/ghost"}},
			want:    nil,
			wantLog: "key=ns/ghost",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs logBuffer
			opts := DeltaFIFOOptions[*corev1.ConfigMap]{Logger: testLogger(&logs)}
			if tt.known != nil {
				opts.KnownObjects = tt.known
			}
			f := NewDeltaFIFO(opts)
			if tt.before != nil {
				tt.before(f)
			}
			require.NoError(t, f.Resync())
			assert.Equal(t, tt.want, summaries(popAll(t, f)))
			if tt.wantLog != "" {
				assert.Contains(t, logs.String(), tt.wantLog)
			}
		})
	}
}
