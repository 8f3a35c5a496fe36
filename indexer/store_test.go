package indexer

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestStoreWrites(t *testing.T) {
	type store = Indexer[*corev1.ConfigMap]
	tests := []struct {
		name  string
		setup func(t *testing.T, s store)
		check func(t *testing.T, s store)
	}{
		{
			name:  "Add stores the object under its namespace/name key",
			setup: func(t *testing.T, s store) { require.NoError(t, s.Add(cm("ns", "a"))) },
			check: func(t *testing.T, s store) {
				got, ok, err := s.GetByKey("ns/a")
				require.NoError(t, err)
				require.True(t, ok)
				assert.Equal(t, "a", got.Name)
			},
		},
		{
			name: "Update replaces the object stored under the same key",
			setup: func(t *testing.T, s store) {
				require.NoError(t, s.Add(withData(cm("ns", "a"), "old")))
				require.NoError(t, s.Update(withData(cm("ns", "a"), "new")))
			},
			check: func(t *testing.T, s store) {
				got, ok, _ := s.GetByKey("ns/a")
				require.True(t, ok)
				assert.Equal(t, "new", got.Data["v"])
				assert.Len(t, s.List(), 1)
			},
		},
		{
			name: "Add of an existing key behaves like Update",
			setup: func(t *testing.T, s store) {
				require.NoError(t, s.Add(withData(cm("ns", "a"), "old")))
				require.NoError(t, s.Add(withData(cm("ns", "a"), "new")))
			},
			check: func(t *testing.T, s store) {
				got, _, _ := s.GetByKey("ns/a")
				assert.Equal(t, "new", got.Data["v"])
			},
		},
		{
			name: "Update of an absent key adds it",
			setup: func(t *testing.T, s store) {
				require.NoError(t, s.Update(cm("ns", "a")))
			},
			check: func(t *testing.T, s store) { assert.Equal(t, []string{"ns/a"}, s.ListKeys()) },
		},
		{
			name: "Delete removes the key",
			setup: func(t *testing.T, s store) {
				require.NoError(t, s.Add(cm("ns", "a")))
				require.NoError(t, s.Add(cm("ns", "b")))
				require.NoError(t, s.Delete(cm("ns", "a")))
			},
			check: func(t *testing.T, s store) {
				_, ok, _ := s.GetByKey("ns/a")
				assert.False(t, ok)
				assert.Equal(t, []string{"ns/b"}, s.ListKeys())
			},
		},
		{
			name: "Delete of an absent key is a no-op without error",
			setup: func(t *testing.T, s store) {
				require.NoError(t, s.Add(cm("ns", "b")))
				require.NoError(t, s.Delete(cm("ns", "never-added")))
			},
			check: func(t *testing.T, s store) { assert.Equal(t, []string{"ns/b"}, s.ListKeys()) },
		},
		{
			name: "Delete with a stale object removes the current one and its index entries",
			setup: func(t *testing.T, s store) {
				require.NoError(t, s.Add(cm("ns", "a", "app", "old")))
				require.NoError(t, s.Update(cm("ns", "a", "app", "new")))
				require.NoError(t, s.Delete(cm("ns", "a", "app", "old"))) // last known state, stale
			},
			check: func(t *testing.T, s store) {
				assert.Empty(t, s.ListKeys())
				assert.Empty(t, s.ListIndexFuncValues("app"))
				assert.Empty(t, s.ListIndexFuncValues(NamespaceIndex))
			},
		},
		{
			name: "Get looks the object up by the key of the object it is given",
			setup: func(t *testing.T, s store) {
				require.NoError(t, s.Add(withData(cm("ns", "a"), "stored")))
			},
			check: func(t *testing.T, s store) {
				got, ok, err := s.Get(cm("ns", "a"))
				require.NoError(t, err)
				require.True(t, ok)
				assert.Equal(t, "stored", got.Data["v"])

				_, ok, err = s.Get(cm("other", "a"))
				require.NoError(t, err)
				assert.False(t, ok)
			},
		},
		{
			name: "List and ListKeys return every stored object once",
			setup: func(t *testing.T, s store) {
				for _, o := range []*corev1.ConfigMap{cm("ns", "a"), cm("ns", "b"), cm("", "cluster")} {
					require.NoError(t, s.Add(o))
				}
			},
			check: func(t *testing.T, s store) {
				assert.Equal(t, []string{"cluster", "ns/a", "ns/b"}, names(s.List()))
				assert.Equal(t, []string{"cluster", "ns/a", "ns/b"}, sorted(s.ListKeys()))
			},
		},
		{
			name: "GetByKey of an absent key returns the zero value and no error",
			check: func(t *testing.T, s store) {
				got, ok, err := s.GetByKey("ns/none")
				require.NoError(t, err)
				assert.False(t, ok)
				assert.Nil(t, got)
			},
		},
		{
			name: "Resync changes nothing and returns nil",
			setup: func(t *testing.T, s store) {
				require.NoError(t, s.Add(cm("ns", "a")))
				require.NoError(t, s.Resync())
			},
			check: func(t *testing.T, s store) { assert.Equal(t, []string{"ns/a"}, s.ListKeys()) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newCMIndexer()
			if tt.setup != nil {
				tt.setup(t, s)
			}
			tt.check(t, s)
		})
	}
}

func TestStoreCustomKeyFunc(t *testing.T) {
	t.Run("the KeyFunc from Options decides the key", func(t *testing.T) {
		s := New(Options[*corev1.ConfigMap]{KeyFunc: func(c *corev1.ConfigMap) (string, error) {
			return "k:" + c.Name, nil
		}})
		require.NoError(t, s.Add(cm("ns", "a")))
		assert.Equal(t, []string{"k:a"}, s.ListKeys())
	})
	t.Run("a KeyFunc error is returned wrapped and nothing is stored", func(t *testing.T) {
		boom := errors.New("no key for you")
		s := New(Options[*corev1.ConfigMap]{KeyFunc: func(c *corev1.ConfigMap) (string, error) {
			if c.Name == "bad" {
				return "", boom
			}
			return c.Name, nil
		}})
		require.NoError(t, s.Add(cm("ns", "good")))
		for name, op := range map[string]func(*corev1.ConfigMap) error{
			"Add": s.Add, "Update": s.Update, "Delete": s.Delete,
			"Replace": func(c *corev1.ConfigMap) error { return s.Replace([]*corev1.ConfigMap{cm("ns", "x"), c}, "") },
			"Get":     func(c *corev1.ConfigMap) error { _, _, err := s.Get(c); return err },
		} {
			err := op(cm("ns", "bad"))
			require.ErrorIs(t, err, ErrKeyFunc, name)
			require.ErrorIs(t, err, boom, name)
		}
		assert.Equal(t, []string{"good"}, s.ListKeys())
	})
}

func TestStoreRejectsNilObjects(t *testing.T) {
	// A custom KeyFunc that would happily key a nil object: the store must still refuse.
	s := New(Options[*corev1.ConfigMap]{
		KeyFunc:  func(*corev1.ConfigMap) (string, error) { return "k", nil },
		Indexers: Indexers[*corev1.ConfigMap]{NamespaceIndex: MetaNamespaceIndexFunc[*corev1.ConfigMap]},
	})
	require.NoError(t, s.Add(cm("ns", "kept")))
	ops := map[string]func() error{
		"Add":     func() error { return s.Add(nil) },
		"Update":  func() error { return s.Update(nil) },
		"Delete":  func() error { return s.Delete(nil) },
		"Get":     func() error { _, _, err := s.Get(nil); return err },
		"Replace": func() error { return s.Replace([]*corev1.ConfigMap{cm("ns", "x"), nil}, "") },
		"Index":   func() error { _, err := s.Index(NamespaceIndex, nil); return err },
	}
	for name, op := range ops {
		t.Run(name+" of a nil object returns ErrNilObject", func(t *testing.T) {
			require.ErrorIs(t, op(), ErrNilObject)
			got, ok, _ := s.GetByKey("k")
			require.True(t, ok, "the stored object survives")
			assert.Equal(t, "kept", got.Name)
		})
	}
}

func TestReplace(t *testing.T) {
	t.Run("Replace makes the list the whole content and rebuilds the indexes", func(t *testing.T) {
		s := newCMIndexer()
		require.NoError(t, s.Add(cm("ns", "gone", "app", "old")))
		require.NoError(t, s.Add(cm("ns", "kept", "app", "old")))

		require.NoError(t, s.Replace([]*corev1.ConfigMap{
			cm("ns", "kept", "app", "web"), cm("other", "new", "app", "web"),
		}, "42"))

		assert.Equal(t, []string{"ns/kept", "other/new"}, names(s.List()))
		assert.Equal(t, []string{"web"}, s.ListIndexFuncValues("app"))
		keys, err := s.IndexKeys("app", "web")
		require.NoError(t, err)
		assert.Equal(t, []string{"ns/kept", "other/new"}, keys)
		assert.Equal(t, []string{"ns", "other"}, sorted(s.ListIndexFuncValues(NamespaceIndex)))
	})
	t.Run("Replace with an empty list empties the store and every index", func(t *testing.T) {
		s := newCMIndexer()
		require.NoError(t, s.Add(cm("ns", "a", "app", "web")))
		require.NoError(t, s.Replace(nil, ""))
		assert.Empty(t, s.List())
		assert.Empty(t, s.ListIndexFuncValues("app"))
		assert.Empty(t, s.ListIndexFuncValues(NamespaceIndex))
	})
	t.Run("with duplicate keys in the list the last one wins", func(t *testing.T) {
		s := newCMIndexer()
		require.NoError(t, s.Replace([]*corev1.ConfigMap{
			cm("ns", "a", "app", "first"), cm("ns", "a", "app", "last"),
		}, ""))
		got, _, _ := s.GetByKey("ns/a")
		assert.Equal(t, "last", got.Labels["app"])
		assert.Equal(t, []string{"last"}, s.ListIndexFuncValues("app"), "the first one left no index entry")
	})
	t.Run("an IndexFunc error fails the whole Replace and keeps the old content", func(t *testing.T) {
		s := New(Options[*corev1.ConfigMap]{Indexers: Indexers[*corev1.ConfigMap]{"app": failOnPoison}})
		require.NoError(t, s.Add(cm("ns", "old", "app", "x")))

		err := s.Replace([]*corev1.ConfigMap{cm("ns", "new", "app", "y"), cm("ns", "bad", "poison", "1")}, "")
		require.ErrorIs(t, err, ErrIndexFunc)
		require.ErrorIs(t, err, errPoison)
		assert.Contains(t, err.Error(), `"ns/bad"`, "the error names the key")

		assert.Equal(t, []string{"ns/old"}, names(s.List()))
		assert.Equal(t, []string{"x"}, s.ListIndexFuncValues("app"))
	})
	t.Run("an index added while Replace is building is filled for the new content", func(t *testing.T) {
		// Replace calls IndexFuncs without holding the lock. This IndexFunc uses that
		// window to add an index, as a concurrent AddIndexers would.
		var s Indexer[*corev1.ConfigMap]
		added := false
		s = New(Options[*corev1.ConfigMap]{Indexers: Indexers[*corev1.ConfigMap]{
			"app": func(c *corev1.ConfigMap) ([]string, error) {
				if c.Name == "trigger" && !added {
					added = true
					require.NoError(t, s.AddIndexers(Indexers[*corev1.ConfigMap]{NamespaceIndex: MetaNamespaceIndexFunc[*corev1.ConfigMap]}))
				}
				return byApp(c)
			},
		}})
		require.NoError(t, s.Replace([]*corev1.ConfigMap{cm("ns1", "trigger"), cm("ns2", "b")}, ""))
		require.True(t, added)

		got, err := s.ByIndex(NamespaceIndex, "ns2")
		require.NoError(t, err, "the new table has the index added during the build")
		assert.Equal(t, []string{"ns2/b"}, names(got))
		assert.Contains(t, s.GetIndexers(), NamespaceIndex)
	})
}
