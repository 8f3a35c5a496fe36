package indexer

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

type cmIndexer = Indexer[*corev1.ConfigMap]

func TestIndexMaintenance(t *testing.T) {
	tests := []struct {
		name  string
		ops   func(t *testing.T, s cmIndexer)
		check func(t *testing.T, s cmIndexer)
	}{
		{
			name: "an update that keeps the index value leaves the key filed under it",
			ops: func(t *testing.T, s cmIndexer) {
				require.NoError(t, s.Add(withData(cm("ns", "a", "app", "web"), "1")))
				require.NoError(t, s.Update(withData(cm("ns", "a", "app", "web"), "2")))
			},
			check: func(t *testing.T, s cmIndexer) {
				keys, err := s.IndexKeys("app", "web")
				require.NoError(t, err)
				assert.Equal(t, []string{"ns/a"}, keys)
			},
		},
		{
			name: "ByIndex returns the current object after an update that kept the value",
			ops: func(t *testing.T, s cmIndexer) {
				require.NoError(t, s.Add(withData(cm("ns", "a", "app", "web"), "1")))
				require.NoError(t, s.Update(withData(cm("ns", "a", "app", "web"), "2")))
			},
			check: func(t *testing.T, s cmIndexer) {
				got, err := s.ByIndex("app", "web")
				require.NoError(t, err)
				require.Len(t, got, 1)
				assert.Equal(t, "2", got[0].Data["v"])
			},
		},
		{
			name: "an update that changes the value moves the key to the new value",
			ops: func(t *testing.T, s cmIndexer) {
				require.NoError(t, s.Add(cm("ns", "a", "app", "web")))
				require.NoError(t, s.Add(cm("ns", "b", "app", "web")))
				require.NoError(t, s.Update(cm("ns", "a", "app", "db")))
			},
			check: func(t *testing.T, s cmIndexer) {
				web, _ := s.IndexKeys("app", "web")
				db, _ := s.IndexKeys("app", "db")
				assert.Equal(t, []string{"ns/b"}, web)
				assert.Equal(t, []string{"ns/a"}, db)
			},
		},
		{
			name: "a value whose last key moves away disappears from the index",
			ops: func(t *testing.T, s cmIndexer) {
				require.NoError(t, s.Add(cm("ns", "a", "app", "web")))
				require.NoError(t, s.Update(cm("ns", "a", "app", "db")))
			},
			check: func(t *testing.T, s cmIndexer) {
				assert.Equal(t, []string{"db"}, s.ListIndexFuncValues("app"))
			},
		},
		{
			name: "a value whose last key is deleted disappears from the index",
			ops: func(t *testing.T, s cmIndexer) {
				require.NoError(t, s.Add(cm("ns", "a", "app", "web")))
				require.NoError(t, s.Add(cm("other", "b", "app", "db")))
				require.NoError(t, s.Delete(cm("ns", "a")))
			},
			check: func(t *testing.T, s cmIndexer) {
				assert.Equal(t, []string{"db"}, s.ListIndexFuncValues("app"))
				assert.Equal(t, []string{"other"}, s.ListIndexFuncValues(NamespaceIndex))
			},
		},
		{
			name: "an object for which the IndexFunc returns no value is stored but not indexed",
			ops: func(t *testing.T, s cmIndexer) {
				require.NoError(t, s.Add(cm("ns", "unlabelled")))
			},
			check: func(t *testing.T, s cmIndexer) {
				assert.Empty(t, s.ListIndexFuncValues("app"))
				assert.Equal(t, []string{"ns/unlabelled"}, s.ListKeys())
				assert.Equal(t, []string{"ns"}, s.ListIndexFuncValues(NamespaceIndex))
			},
		},
		{
			name: "losing the value in an update takes the key out of the index",
			ops: func(t *testing.T, s cmIndexer) {
				require.NoError(t, s.Add(cm("ns", "a", "app", "web")))
				require.NoError(t, s.Update(cm("ns", "a")))
			},
			check: func(t *testing.T, s cmIndexer) {
				assert.Empty(t, s.ListIndexFuncValues("app"))
			},
		},
		{
			name: "IndexKeys returns the keys sorted",
			ops: func(t *testing.T, s cmIndexer) {
				for _, n := range []string{"d", "b", "e", "a", "c"} {
					require.NoError(t, s.Add(cm("ns", n, "app", "web")))
				}
			},
			check: func(t *testing.T, s cmIndexer) {
				keys, err := s.IndexKeys("app", "web")
				require.NoError(t, err)
				assert.Equal(t, []string{"ns/a", "ns/b", "ns/c", "ns/d", "ns/e"}, keys)
			},
		},
		{
			name: "an unknown value is an empty result, not an error",
			check: func(t *testing.T, s cmIndexer) {
				got, err := s.ByIndex("app", "nothing")
				require.NoError(t, err)
				assert.Empty(t, got)
				keys, err := s.IndexKeys("app", "nothing")
				require.NoError(t, err)
				assert.Empty(t, keys)
			},
		},
		{
			name: "an unknown index name is an error for every query",
			check: func(t *testing.T, s cmIndexer) {
				_, err := s.ByIndex("nope", "x")
				require.ErrorIs(t, err, ErrUnknownIndex)
				assert.Contains(t, err.Error(), `"nope"`)
				_, err = s.IndexKeys("nope", "x")
				require.ErrorIs(t, err, ErrUnknownIndex)
				_, err = s.Index("nope", cm("ns", "a"))
				require.ErrorIs(t, err, ErrUnknownIndex)
				assert.Nil(t, s.ListIndexFuncValues("nope"))
			},
		},
		{
			name: "Index returns the stored objects sharing a value with an unstored probe",
			ops: func(t *testing.T, s cmIndexer) {
				require.NoError(t, s.Add(cm("ns", "a", "app", "web")))
				require.NoError(t, s.Add(cm("ns", "b", "app", "db")))
			},
			check: func(t *testing.T, s cmIndexer) {
				got, err := s.Index("app", cm("elsewhere", "probe", "app", "web"))
				require.NoError(t, err)
				assert.Equal(t, []string{"ns/a"}, names(got))
			},
		},
		{
			name: "unindexing uses the values recorded at store time, so an in-place mutation leaves no stale entry",
			ops: func(t *testing.T, s cmIndexer) {
				require.NoError(t, s.Add(cm("ns", "a", "app", "web")))
				cached, _, _ := s.GetByKey("ns/a")
				cached.Labels["app"] = "mutated" // a bug in a caller, but a common one
				require.NoError(t, s.Delete(cached))
			},
			check: func(t *testing.T, s cmIndexer) {
				assert.Empty(t, s.ListIndexFuncValues("app"), "client-go would leave ns/a filed under web")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newCMIndexer()
			if tt.ops != nil {
				tt.ops(t, s)
			}
			tt.check(t, s)
		})
	}
}

func TestMultiValueIndex(t *testing.T) {
	newStore := func(t *testing.T) cmIndexer {
		s := New(Options[*corev1.ConfigMap]{Indexers: Indexers[*corev1.ConfigMap]{"fin": byFinalizer}})
		require.NoError(t, s.Add(withFinalizers(cm("ns", "a"), "x", "y")))
		require.NoError(t, s.Add(withFinalizers(cm("ns", "b"), "y")))
		return s
	}
	t.Run("an object with several values is found under each", func(t *testing.T) {
		s := newStore(t)
		x, _ := s.IndexKeys("fin", "x")
		y, _ := s.IndexKeys("fin", "y")
		assert.Equal(t, []string{"ns/a"}, x)
		assert.Equal(t, []string{"ns/a", "ns/b"}, y)
	})
	t.Run("Index with several values returns each matching object once", func(t *testing.T) {
		s := newStore(t)
		got, err := s.Index("fin", withFinalizers(cm("ns", "probe"), "x", "y"))
		require.NoError(t, err)
		assert.Equal(t, []string{"ns/a", "ns/b"}, names(got))
	})
	t.Run("changing one of several values moves only that one", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.Update(withFinalizers(cm("ns", "a"), "y", "z")))
		assert.ElementsMatch(t, []string{"y", "z"}, s.ListIndexFuncValues("fin"))
		y, _ := s.IndexKeys("fin", "y")
		z, _ := s.IndexKeys("fin", "z")
		assert.Equal(t, []string{"ns/a", "ns/b"}, y)
		assert.Equal(t, []string{"ns/a"}, z)
	})
	t.Run("a value listed twice files the key once and unfiles it cleanly", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.Add(withFinalizers(cm("ns", "dup"), "w", "w")))
		w, _ := s.IndexKeys("fin", "w")
		assert.Equal(t, []string{"ns/dup"}, w)
		require.NoError(t, s.Update(withFinalizers(cm("ns", "dup"), "w")))
		w, _ = s.IndexKeys("fin", "w")
		assert.Equal(t, []string{"ns/dup"}, w, "dropping the duplicate keeps the key filed")
		require.NoError(t, s.Delete(cm("ns", "dup")))
		assert.NotContains(t, s.ListIndexFuncValues("fin"), "w")
	})
}

func TestIndexFuncErrors(t *testing.T) {
	newStore := func(t *testing.T) cmIndexer {
		s := New(Options[*corev1.ConfigMap]{Indexers: Indexers[*corev1.ConfigMap]{
			NamespaceIndex: MetaNamespaceIndexFunc[*corev1.ConfigMap],
			"app":          failOnPoison,
		}})
		require.NoError(t, s.Add(withData(cm("ns", "a", "app", "web"), "original")))
		return s
	}
	assertUnchanged := func(t *testing.T, s cmIndexer) {
		t.Helper()
		got, ok, _ := s.GetByKey("ns/a")
		require.True(t, ok)
		assert.Equal(t, "original", got.Data["v"])
		assert.Equal(t, []string{"ns/a"}, sorted(s.ListKeys()))
		assert.Equal(t, []string{"web"}, s.ListIndexFuncValues("app"))
		assert.Equal(t, []string{"ns"}, s.ListIndexFuncValues(NamespaceIndex))
		web, _ := s.ByIndex("app", "web")
		require.Len(t, web, 1)
		assert.Equal(t, "original", web[0].Data["v"])
	}

	tests := []struct {
		name string
		op   func(s cmIndexer) error
	}{
		{"Add of a new object that an IndexFunc rejects returns the error and stores nothing",
			func(s cmIndexer) error { return s.Add(cm("other", "b", "poison", "1")) }},
		{"Update of a stored object that an IndexFunc rejects keeps the old object and entries",
			func(s cmIndexer) error { return s.Update(withData(cm("ns", "a", "poison", "1"), "changed")) }},
		{"Index with a probe that the IndexFunc rejects returns the error",
			func(s cmIndexer) error { _, err := s.Index("app", cm("ns", "p", "poison", "1")); return err }},
		{"AddIndexers whose IndexFunc rejects a stored object adds no index",
			func(s cmIndexer) error {
				return s.AddIndexers(Indexers[*corev1.ConfigMap]{
					"ok":     byApp,
					"strict": func(*corev1.ConfigMap) ([]string, error) { return nil, errPoison },
				})
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			err := tt.op(s)
			require.ErrorIs(t, err, ErrIndexFunc)
			require.ErrorIs(t, err, errPoison)
			assertUnchanged(t, s)
			assert.Len(t, s.GetIndexers(), 2, "no index was added")
		})
	}
}

func TestAddIndexers(t *testing.T) {
	t.Run("AddIndexers on a populated store back-fills every object", func(t *testing.T) {
		s := New(Options[*corev1.ConfigMap]{})
		require.NoError(t, s.Add(cm("ns", "a", "app", "web")))
		require.NoError(t, s.Add(cm("ns", "b", "app", "web")))
		require.NoError(t, s.Add(cm("ns", "c")))

		require.NoError(t, s.AddIndexers(Indexers[*corev1.ConfigMap]{"app": byApp}))
		keys, err := s.IndexKeys("app", "web")
		require.NoError(t, err)
		assert.Equal(t, []string{"ns/a", "ns/b"}, keys)

		require.NoError(t, s.Update(cm("ns", "a", "app", "db")), "later writes maintain the new index")
		keys, _ = s.IndexKeys("app", "db")
		assert.Equal(t, []string{"ns/a"}, keys)
	})
	t.Run("AddIndexers with a name that exists is an error and adds none of the batch", func(t *testing.T) {
		s := newCMIndexer()
		err := s.AddIndexers(Indexers[*corev1.ConfigMap]{"app": byApp, "fin": byFinalizer})
		require.ErrorIs(t, err, ErrIndexConflict)
		assert.Contains(t, err.Error(), "app")
		assert.NotContains(t, s.GetIndexers(), "fin")
	})
	t.Run("AddIndexers with a nil IndexFunc is an error", func(t *testing.T) {
		s := newCMIndexer()
		err := s.AddIndexers(Indexers[*corev1.ConfigMap]{"nilfn": nil})
		require.ErrorIs(t, err, ErrNilIndexFunc)
		assert.NotContains(t, s.GetIndexers(), "nilfn")
	})
	t.Run("AddIndexers with no indexers is a no-op", func(t *testing.T) {
		s := newCMIndexer()
		require.NoError(t, s.AddIndexers(nil))
		assert.Len(t, s.GetIndexers(), 2)
	})
	t.Run("a nil IndexFunc given to New is reported by the first write", func(t *testing.T) {
		s := New(Options[*corev1.ConfigMap]{Indexers: Indexers[*corev1.ConfigMap]{"broken": nil}})
		err := s.Add(cm("ns", "a"))
		require.ErrorIs(t, err, ErrNilIndexFunc)
		assert.Contains(t, err.Error(), `"broken"`)
		assert.Empty(t, s.ListKeys())
	})
	t.Run("GetIndexers returns a copy the caller cannot use to change the store", func(t *testing.T) {
		s := newCMIndexer()
		got := s.GetIndexers()
		require.Len(t, got, 2)
		got["injected"] = byApp
		delete(got, "app")
		assert.Len(t, s.GetIndexers(), 2)
		assert.Contains(t, s.GetIndexers(), "app")
		assert.Nil(t, s.ListIndexFuncValues("injected"))
	})
}

func TestMetaNamespaceIndexFunc(t *testing.T) {
	got, err := MetaNamespaceIndexFunc(cm("ns", "a"))
	require.NoError(t, err)
	assert.Equal(t, []string{"ns"}, got)

	got, err = MetaNamespaceIndexFunc(cm("", "cluster"))
	require.NoError(t, err)
	assert.Equal(t, []string{""}, got, "a cluster-scoped object is indexed under the empty namespace")

	_, err = MetaNamespaceIndexFunc[*corev1.ConfigMap](nil)
	require.ErrorIs(t, err, ErrNilObject)
}

// TestUpdateFastPathAllocatesNothing: with IndexFuncs that do not allocate, an update
// that leaves every index value unchanged allocates nothing inside the store, whether
// the key comes from a custom KeyFunc or from the default one (which the store builds in
// a stack buffer). A Get by object allocates nothing either.
func TestUpdateFastPathAllocatesNothing(t *testing.T) {
	values := map[string][]string{"web": {"web"}, "ns": {"ns"}}
	indexers := Indexers[*corev1.ConfigMap]{
		"ns":  func(c *corev1.ConfigMap) ([]string, error) { return values[c.Namespace], nil },
		"app": func(c *corev1.ConfigMap) ([]string, error) { return values[c.Labels["app"]], nil },
	}
	keyFuncs := map[string]KeyFunc[*corev1.ConfigMap]{
		"with a custom KeyFunc":         func(c *corev1.ConfigMap) (string, error) { return c.Name, nil },
		"with the default key function": nil,
	}
	for name, keyFunc := range keyFuncs {
		t.Run(name, func(t *testing.T) {
			s := New(Options[*corev1.ConfigMap]{KeyFunc: keyFunc, Indexers: indexers})
			v1, v2 := cm("ns", "a", "app", "web"), cm("ns", "a", "app", "web")
			require.NoError(t, s.Add(v1))
			flip := false
			updateAllocs := testing.AllocsPerRun(100, func() {
				flip = !flip
				obj := v1
				if flip {
					obj = v2
				}
				if err := s.Update(obj); err != nil {
					t.Fatal(err)
				}
			})
			assert.Zero(t, updateAllocs, "Update")
			getAllocs := testing.AllocsPerRun(100, func() {
				if _, ok, _ := s.Get(v1); !ok {
					t.Fatal("not found")
				}
			})
			assert.Zero(t, getAllocs, "Get")
		})
	}
}
