package indexer

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// TestColumnPushPop fills a column over several pages and empties it again, checking
// every element on the way and that nothing removed stays reachable.
func TestColumnPushPop(t *testing.T) {
	const n = 3*pageLen + 17
	c := newColumn[string](0)
	for i := range n {
		c.push(fmt.Sprint(i))
		require.Equal(t, i+1, c.len())
	}
	for i := range n {
		require.Equal(t, fmt.Sprint(i), *c.at(i))
	}
	require.Len(t, c.pages, 4)
	for p, page := range c.pages[:3] {
		assert.Len(t, page, pageLen, "page %d is full", p)
	}

	for i := n - 1; i >= 0; i-- {
		c.pop()
		require.Equal(t, i, c.len())
		if i > 0 {
			require.Equal(t, fmt.Sprint(i-1), *c.at(i - 1))
		}
		// At most one empty page is kept, as a spare.
		require.LessOrEqual(t, len(c.pages), i/pageLen+2, "pages after pop to %d", i)
	}
	for _, page := range c.pages {
		for _, s := range page[:cap(page)] {
			require.Empty(t, s, "a popped slot is cleared")
		}
	}

	// Pushing again fills the spare page rather than adding one.
	for i := range pageLen + 1 {
		c.push(fmt.Sprint(i))
	}
	assert.Len(t, c.pages, 2)
	assert.Equal(t, fmt.Sprint(pageLen), *c.at(pageLen))
}

// TestColumnGrowthAllocatesAboutTheFinalSize is why column exists: growing one element
// at a time allocates the final array plus at most a page and the copies of the first
// page, where append allocated about five times the final size.
func TestColumnGrowthAllocatesAboutTheFinalSize(t *testing.T) {
	const n = 100 * pageLen
	const size = 16 // a string header
	// slack: TotalAlloc counts every goroutine's allocations, and the runtime and the
	// testing package allocate now and then (a CI run once saw 4 KiB more during one
	// push loop). The growth this test guards against is megabytes.
	const slack = 64 << 10
	allocated := func(push func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		push()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}

	var grown column[string]
	got := allocated(func() {
		grown = newColumn[string](0)
		for range n {
			grown.push("v")
		}
	})
	// The pages themselves, plus the first page's copies while it grew by append (about
	// three pages) and the page directory (100 slice headers). A slice grown by append
	// allocates about 5*n*size.
	assert.LessOrEqual(t, got, uint64(n*size+4*pageLen*size+slack), "pushing %d strings one at a time", n)

	// Replace gives the final size up front: then nothing but the pages and the
	// directory is allocated, and the last page is exactly as long as needed.
	var sized column[string]
	const m = n + 100
	got = allocated(func() {
		sized = newColumn[string](m)
		for range m {
			sized.push("v")
		}
	})
	assert.LessOrEqual(t, got, uint64(m*size+4<<10+slack), "pushing %d strings into a column sized for them", m)
	assert.Equal(t, 100, cap(sized.pages[100]), "the last page is exactly sized")
	runtime.KeepAlive(grown)
	runtime.KeepAlive(sized)
}

// TestTableOverManyPages drives a table of a few thousand objects, so that removals
// move keys across pages, and checks its invariants (see table) after each phase.
func TestTableOverManyPages(t *testing.T) {
	s := New(Options[*corev1.ConfigMap]{Indexers: Indexers[*corev1.ConfigMap]{
		NamespaceIndex: MetaNamespaceIndexFunc[*corev1.ConfigMap],
		"fin":          byFinalizer,
	}})
	tbl := func() *table[*corev1.ConfigMap] { return s.(*store[*corev1.ConfigMap]).t }
	obj := func(i int) *corev1.ConfigMap {
		return withFinalizers(cm(fmt.Sprintf("ns-%d", i%7), fmt.Sprintf("cm-%d", i)), fmt.Sprintf("f%d", i%5), fmt.Sprintf("g%d", i%3))
	}
	const n = 3*pageLen + 100
	for i := range n {
		require.NoError(t, s.Add(obj(i)))
	}
	checkTable(t, tbl(), "after adding")

	r := rand.New(rand.NewPCG(1, 2))
	for _, i := range r.Perm(n)[:n/2] {
		require.NoError(t, s.Delete(obj(i)))
	}
	checkTable(t, tbl(), "after deleting half")
	assert.LessOrEqual(t, len(tbl().objs.pages), (n/2)/pageLen+2, "emptied pages beyond one spare are released")

	for i := range n {
		require.NoError(t, s.Update(obj(i)))
	}
	checkTable(t, tbl(), "after adding them back")

	require.NoError(t, s.AddIndexers(Indexers[*corev1.ConfigMap]{"app": byApp}))
	checkTable(t, tbl(), "after AddIndexers")

	list := make([]*corev1.ConfigMap, n)
	for i := range list {
		list[i] = obj(i)
	}
	require.NoError(t, s.Replace(list, ""))
	checkTable(t, tbl(), "after Replace")
}

// checkTable checks the table's invariants: the columns are parallel, items points at
// each key's position, and every index set holds exactly the positions whose stored
// values name it.
func checkTable[T Object](t *testing.T, tbl *table[T], at string) {
	t.Helper()
	n := len(tbl.indexes)
	require.Equal(t, len(tbl.items), tbl.objs.len(), at)
	require.Equal(t, len(tbl.items), tbl.keys.len(), at)
	require.Equal(t, len(tbl.items)*n, tbl.vals.len(), at)
	for pos := range tbl.objs.len() {
		key := *tbl.keys.at(pos)
		require.Equal(t, int32(pos), tbl.items[key], "%s: items[%q]", at, key)
		obj := *tbl.objs.at(pos)
		require.Equal(t, key, ObjectKey(obj.GetNamespace(), obj.GetName()), at)
	}
	for i, ix := range tbl.indexes {
		want := map[string]map[int32]struct{}{}
		for pos := range tbl.objs.len() {
			for _, v := range decodeValues(*tbl.vals.at(pos*n + i), nil) {
				if want[v] == nil {
					want[v] = map[int32]struct{}{}
				}
				want[v][int32(pos)] = struct{}{}
			}
		}
		require.Equal(t, want, ix.sets, "%s: index %s", at, ix.name)
	}
}
