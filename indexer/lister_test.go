package indexer

import (
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
)

// foreignIndexer is not the store's concrete type, so the Lister takes the path
// it takes for any other Indexer implementation. It records ByIndex calls.
type foreignIndexer struct {
	Indexer[*corev1.ConfigMap]
	byIndexCalls []string
	byIndexErr   error
}

func (f *foreignIndexer) ByIndex(name, value string) ([]*corev1.ConfigMap, error) {
	f.byIndexCalls = append(f.byIndexCalls, name+"="+value)
	if f.byIndexErr != nil {
		return nil, f.byIndexErr
	}
	return f.Indexer.ByIndex(name, value)
}

func fill(t *testing.T, s Indexer[*corev1.ConfigMap]) {
	t.Helper()
	for _, c := range []*corev1.ConfigMap{
		cm("blue", "web", "app", "web", "team", "blue"),
		cm("blue", "db", "app", "db", "team", "blue"),
		cm("red", "web", "app", "web", "team", "red"),
		cm("red", "cache", "team", "blue"),
		cm("", "cluster-wide", "app", "web"),
	} {
		require.NoError(t, s.Add(c))
	}
}

func TestListerList(t *testing.T) {
	stores := map[string]func() Indexer[*corev1.ConfigMap]{
		"with a namespace index":    newCMIndexer,
		"without a namespace index": func() Indexer[*corev1.ConfigMap] { return New(Options[*corev1.ConfigMap]{}) },
		"through another Indexer implementation": func() Indexer[*corev1.ConfigMap] {
			return &foreignIndexer{Indexer: newCMIndexer()}
		},
		"through another Indexer implementation without a namespace index": func() Indexer[*corev1.ConfigMap] {
			return &foreignIndexer{Indexer: New(Options[*corev1.ConfigMap]{})}
		},
	}
	tests := []struct {
		name      string
		namespace string
		selector  labels.Selector
		want      []string
	}{
		{"List with a selector matches labels in every namespace", "",
			labels.SelectorFromSet(labels.Set{"app": "web"}), []string{"blue/web", "cluster-wide", "red/web"}},
		{"a nil selector matches everything", "", nil,
			[]string{"blue/db", "blue/web", "cluster-wide", "red/cache", "red/web"}},
		{"labels.Everything matches everything", "", labels.Everything(),
			[]string{"blue/db", "blue/web", "cluster-wide", "red/cache", "red/web"}},
		{"labels.Nothing matches nothing", "", labels.Nothing(), nil},
		{"a namespaced List returns only that namespace", "blue", labels.Everything(),
			[]string{"blue/db", "blue/web"}},
		{"a namespaced List applies the selector too", "red",
			labels.SelectorFromSet(labels.Set{"team": "blue"}), []string{"red/cache"}},
		{"a namespaced List with nil selector returns the whole namespace", "red", nil,
			[]string{"red/cache", "red/web"}},
		{"a namespaced List of an empty namespace is empty", "green", nil, nil},
		{"a namespaced List with labels.Nothing is empty", "blue", labels.Nothing(), nil},
	}
	for storeName, newStore := range stores {
		for _, tt := range tests {
			t.Run(tt.name+" "+storeName, func(t *testing.T) {
				s := newStore()
				fill(t, s)
				l := NewLister(s)
				var got []*corev1.ConfigMap
				var err error
				if tt.namespace == "" {
					got, err = l.List(tt.selector)
				} else {
					got, err = l.Namespace(tt.namespace).List(tt.selector)
				}
				require.NoError(t, err)
				if tt.want == nil {
					assert.Empty(t, got)
				} else {
					assert.Equal(t, tt.want, names(got))
				}
			})
		}
	}
}

func TestListerUsesNamespaceIndex(t *testing.T) {
	// An index named "namespace" that files objects by their team label instead: a
	// namespaced List that consults the index returns what the index says.
	byTeam := func(c *corev1.ConfigMap) ([]string, error) { return []string{c.Labels["team"]}, nil }

	t.Run("a namespaced List reads the namespace index when the store has one", func(t *testing.T) {
		s := New(Options[*corev1.ConfigMap]{Indexers: Indexers[*corev1.ConfigMap]{NamespaceIndex: byTeam}})
		fill(t, s)
		got, err := NewLister(s).Namespace("blue").List(nil)
		require.NoError(t, err)
		assert.Equal(t, []string{"blue/db", "blue/web", "red/cache"}, names(got))
	})
	t.Run("through another Indexer implementation the Lister calls ByIndex", func(t *testing.T) {
		f := &foreignIndexer{Indexer: newCMIndexer()}
		fill(t, f)
		_, err := NewLister[*corev1.ConfigMap](f).Namespace("red").List(nil)
		require.NoError(t, err)
		assert.Equal(t, []string{"namespace=red"}, f.byIndexCalls)
	})
	t.Run("a ByIndex error other than an unknown index is returned", func(t *testing.T) {
		boom := errors.New("index broken")
		f := &foreignIndexer{Indexer: newCMIndexer(), byIndexErr: boom}
		_, err := NewLister[*corev1.ConfigMap](f).Namespace("red").List(nil)
		require.ErrorIs(t, err, boom)
	})
}

func TestListerGet(t *testing.T) {
	s := newCMIndexer()
	fill(t, s)
	l := NewLister(s)

	t.Run("a namespaced Get finds the object by namespace and name", func(t *testing.T) {
		got, err := l.Namespace("red").Get("web")
		require.NoError(t, err)
		assert.Equal(t, "red", got.Labels["team"])
	})
	t.Run("a cluster-scoped Get finds the object by name", func(t *testing.T) {
		got, err := l.Get("cluster-wide")
		require.NoError(t, err)
		assert.Equal(t, "cluster-wide", got.Name)
	})
	t.Run("a missing object is a NotFoundError that both errors.Is and apierrors.IsNotFound recognise", func(t *testing.T) {
		got, err := l.Namespace("blue").Get("cache")
		assert.Nil(t, got)
		require.ErrorIs(t, err, ErrNotFound)
		assert.True(t, apierrors.IsNotFound(err))
		var nf *NotFoundError
		require.ErrorAs(t, err, &nf)
		assert.Equal(t, NotFoundError{Namespace: "blue", Name: "cache"}, *nf)
		assert.Contains(t, err.Error(), `"blue/cache"`)
	})
	t.Run("a cluster-scoped Get does not find namespaced objects", func(t *testing.T) {
		_, err := l.Get("web")
		require.ErrorIs(t, err, ErrNotFound)
		assert.True(t, apierrors.IsNotFound(err))
	})
	t.Run("a Get of a stored object allocates no key", func(t *testing.T) {
		red := l.Namespace("red")
		assert.Zero(t, testing.AllocsPerRun(100, func() {
			if _, err := red.Get("web"); err != nil {
				t.Fatal(err)
			}
		}))
	})
	t.Run("Namespace(ns).Get allocates only the 24-byte namespaced lister", func(t *testing.T) {
		// The whole call a controller makes, Namespace included: Namespace puts a new
		// nsLister into an interface, which is the one allocation of a Get.
		assert.Equal(t, 1.0, testing.AllocsPerRun(100, func() {
			if _, err := l.Namespace("red").Get("web"); err != nil {
				t.Fatal(err)
			}
		}))
		const runs = 1000
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			if _, err := l.Namespace("red").Get("web"); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		assert.LessOrEqual(t, (after.TotalAlloc-before.TotalAlloc)/runs, uint64(24), "bytes per Get")
	})
	t.Run("a Get through another Indexer implementation finds the object too", func(t *testing.T) {
		got, err := NewLister[*corev1.ConfigMap](&foreignIndexer{Indexer: s}).Namespace("red").Get("web")
		require.NoError(t, err)
		assert.Equal(t, "web", got.Name)
	})
}
