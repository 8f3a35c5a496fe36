package indexer

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// TestChurnLeavesNothingBehind looks inside the table: after objects come and go through
// many distinct index values (like pod IPs), no empty set, no per-key bookkeeping and no
// reference to a deleted object is left over.
func TestChurnLeavesNothingBehind(t *testing.T) {
	byValue := func(c *corev1.ConfigMap) ([]string, error) {
		if v := c.Labels["ip"]; v != "" {
			return []string{v}, nil
		}
		return nil, nil
	}
	s := New(Options[*corev1.ConfigMap]{Indexers: Indexers[*corev1.ConfigMap]{"ip": byValue, "fin": byFinalizer}})
	tbl := s.(*store[*corev1.ConfigMap]).t
	for i := range 200 {
		name := fmt.Sprintf("pod-%d", i%10)
		require.NoError(t, s.Add(withFinalizers(cm("ns", name, "ip", fmt.Sprintf("10.0.0.%d", i)), "f"+name)))
		require.NoError(t, s.Update(cm("ns", name))) // loses both values
		require.NoError(t, s.Update(cm("ns", name, "ip", fmt.Sprintf("10.1.0.%d", i))))
		if i%3 == 0 {
			require.NoError(t, s.Delete(cm("ns", name)))
		}
	}
	for i := range 10 {
		require.NoError(t, s.Delete(cm("ns", fmt.Sprintf("pod-%d", i))))
	}

	assert.Empty(t, tbl.items)
	assert.Zero(t, tbl.objs.len())
	assert.Zero(t, tbl.keys.len())
	assert.Zero(t, tbl.vals.len())
	for _, ix := range tbl.indexes {
		assert.Empty(t, ix.sets, "index %s keeps no empty sets", ix.name)
	}
	// The spare capacity of the dense arrays holds no deleted object or value.
	for _, page := range tbl.objs.pages {
		for _, obj := range page[:cap(page)] {
			assert.Nil(t, obj)
		}
	}
	for _, c := range []column[string]{tbl.keys, tbl.vals} {
		for _, page := range c.pages {
			for _, s := range page[:cap(page)] {
				assert.Empty(t, s)
			}
		}
	}
}

// TestConcurrentUse runs writers, readers, a relist and an AddIndexers at once. Run with
// -race, it checks the locking; afterwards the indexes must agree with the items.
func TestConcurrentUse(t *testing.T) {
	s := newCMIndexer()
	l := NewLister(s)
	const writers, perWriter = 4, 200

	var wg sync.WaitGroup
	for w := range writers {
		// Owner: this test; exits after perWriter writes.
		wg.Go(func() {
			for i := range perWriter {
				name := fmt.Sprintf("w%d-%d", w, i%20)
				app := []string{"web", "db"}[i%2]
				if i%5 == 4 {
					assert.NoError(t, s.Delete(cm("ns", name)))
				} else {
					assert.NoError(t, s.Update(cm("ns", name, "app", app)))
				}
			}
		})
	}
	for range 2 {
		// Owner: this test; exits after a fixed number of reads.
		wg.Go(func() {
			for range perWriter {
				_, _ = s.ByIndex("app", "web")
				_, _ = s.IndexKeys(NamespaceIndex, "ns")
				_, _ = l.Namespace("ns").List(nil)
				_ = s.ListIndexFuncValues("app")
				_ = s.GetIndexers()
			}
		})
	}
	// Owner: this test; exits after one Replace and one AddIndexers.
	wg.Go(func() {
		assert.NoError(t, s.Replace([]*corev1.ConfigMap{cm("ns", "relisted", "app", "web")}, ""))
		assert.NoError(t, s.AddIndexers(Indexers[*corev1.ConfigMap]{"fin": byFinalizer}))
	})
	wg.Wait()

	// Consistency: every index agrees with a scan of the items.
	items := s.List()
	for _, name := range []string{NamespaceIndex, "app"} {
		want := map[string][]string{}
		for _, obj := range items {
			values, err := s.GetIndexers()[name](obj)
			require.NoError(t, err)
			for _, v := range values {
				want[v] = append(want[v], ObjectKey(obj.Namespace, obj.Name))
			}
		}
		assert.ElementsMatch(t, keysOf(want), s.ListIndexFuncValues(name), "values of %s", name)
		for v, keys := range want {
			got, err := s.IndexKeys(name, v)
			require.NoError(t, err)
			assert.Equal(t, sorted(keys), got, "%s=%s", name, v)
		}
	}
	assert.Contains(t, s.GetIndexers(), "fin")
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
