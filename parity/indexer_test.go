package parity

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/parity/internal/check"
)

// ixOp is one write to both indexers.
type ixOp struct {
	kind  string   // "Add", "Update", "Delete", "Replace", "AddIndexers"
	obj   cmSpec   // Add, Update, Delete
	list  []cmSpec // Replace
	rv    string   // Replace
	names []string // AddIndexers
}

func (o ixOp) String() string {
	switch o.kind {
	case "Replace":
		items := make([]string, len(o.list))
		for i, s := range o.list {
			items[i] = s.String()
		}
		return fmt.Sprintf("Replace([%s], %q)", strings.Join(items, " "), o.rv)
	case "AddIndexers":
		return fmt.Sprintf("AddIndexers(%s)", strings.Join(o.names, ","))
	}
	return fmt.Sprintf("%s(%s)", o.kind, o.obj)
}

// ixIndexNames are the indexes AddIndexers picks from; "namespace" is there from the
// start, so adding it again is a conflict.
var ixIndexNames = []string{indexer.NamespaceIndex, "teams", "app", "none"}

func genIndexerOps(r *rand.Rand) []ixOp {
	n := 1 + r.IntN(30)
	ops := make([]ixOp, 0, n)
	rv := 0
	next := func() cmSpec { rv++; return genCM(r, rv) }
	for range n {
		switch k := r.IntN(20); {
		case k < 7:
			ops = append(ops, ixOp{kind: "Add", obj: next()})
		case k < 12:
			ops = append(ops, ixOp{kind: "Update", obj: next()})
		case k < 15:
			ops = append(ops, ixOp{kind: "Delete", obj: next()})
		case k < 17:
			list := make([]cmSpec, r.IntN(6)) // duplicate keys happen: the last one wins
			for i := range list {
				list[i] = next()
			}
			ops = append(ops, ixOp{kind: "Replace", list: list, rv: fmt.Sprint(r.IntN(100))})
		default:
			names := []string{pick(r, ixIndexNames)}
			if r.IntN(3) == 0 {
				names = append(names, pick(r, ixIndexNames))
			}
			ops = append(ops, ixOp{kind: "AddIndexers", names: names})
		}
	}
	return ops
}

// simplifyIndexerOp offers shorter Replace lists: one item fewer, each way.
func simplifyIndexerOp(o ixOp) []ixOp {
	var out []ixOp
	for i := range o.list {
		s := o
		s.list = append(append([]cmSpec(nil), o.list[:i]...), o.list[i+1:]...)
		out = append(out, s)
	}
	if len(o.names) > 1 {
		for _, n := range o.names {
			s := o
			s.names = []string{n}
			out = append(out, s)
		}
	}
	return out
}

// ixSide is one library's indexer behind the same methods, so that one function writes
// both transcripts in the same words.
type ixSide interface {
	add(*corev1.ConfigMap) error
	update(*corev1.ConfigMap) error
	delete(*corev1.ConfigMap) error
	replace([]*corev1.ConfigMap, string) error
	addIndexers(names []string) error
	list() []*corev1.ConfigMap
	listKeys() []string
	get(*corev1.ConfigMap) (*corev1.ConfigMap, bool, error)
	getByKey(string) (*corev1.ConfigMap, bool, error)
	index(name string, obj *corev1.ConfigMap) ([]*corev1.ConfigMap, error)
	indexKeys(name, value string) ([]string, error)
	byIndex(name, value string) ([]*corev1.ConfigMap, error)
	listIndexFuncValues(name string) []string
	indexerNames() []string
}

// ours wraps indexer.Indexer.
type oursIx struct {
	ix indexer.Indexer[*corev1.ConfigMap]
}

func newOursIx(names ...string) *oursIx {
	return &oursIx{indexer.New(indexer.Options[*corev1.ConfigMap]{Indexers: oursIndexers(names)})}
}

func oursIndexers(names []string) indexer.Indexers[*corev1.ConfigMap] {
	out := indexer.Indexers[*corev1.ConfigMap]{}
	for _, n := range names {
		switch n {
		case indexer.NamespaceIndex:
			out[n] = indexer.MetaNamespaceIndexFunc[*corev1.ConfigMap]
		case "teams":
			out[n] = func(cm *corev1.ConfigMap) ([]string, error) { return teamsOf(cm), nil }
		case "app":
			out[n] = func(cm *corev1.ConfigMap) ([]string, error) { return appOf(cm), nil }
		case "none":
			out[n] = func(cm *corev1.ConfigMap) ([]string, error) { return noneOf(cm), nil }
		}
	}
	return out
}

func (o *oursIx) add(cm *corev1.ConfigMap) error    { return o.ix.Add(cm) }
func (o *oursIx) update(cm *corev1.ConfigMap) error { return o.ix.Update(cm) }
func (o *oursIx) delete(cm *corev1.ConfigMap) error { return o.ix.Delete(cm) }
func (o *oursIx) replace(l []*corev1.ConfigMap, rv string) error {
	return o.ix.Replace(l, rv)
}
func (o *oursIx) addIndexers(names []string) error { return o.ix.AddIndexers(oursIndexers(names)) }
func (o *oursIx) list() []*corev1.ConfigMap        { return o.ix.List() }
func (o *oursIx) listKeys() []string               { return o.ix.ListKeys() }
func (o *oursIx) get(cm *corev1.ConfigMap) (*corev1.ConfigMap, bool, error) {
	return o.ix.Get(cm)
}
func (o *oursIx) getByKey(k string) (*corev1.ConfigMap, bool, error) { return o.ix.GetByKey(k) }
func (o *oursIx) index(n string, cm *corev1.ConfigMap) ([]*corev1.ConfigMap, error) {
	return o.ix.Index(n, cm)
}
func (o *oursIx) indexKeys(n, v string) ([]string, error) { return o.ix.IndexKeys(n, v) }
func (o *oursIx) byIndex(n, v string) ([]*corev1.ConfigMap, error) {
	return o.ix.ByIndex(n, v)
}
func (o *oursIx) listIndexFuncValues(n string) []string { return o.ix.ListIndexFuncValues(n) }
func (o *oursIx) indexerNames() []string {
	var names []string
	for n := range o.ix.GetIndexers() {
		names = append(names, n)
	}
	return names
}

// clientGoIx wraps client-go's cache.Indexer, asserting what it returns to ConfigMaps.
type clientGoIx struct{ ix cache.Indexer }

// newClientGoIx builds client-go's indexer with a map of its own: NewIndexer keeps the
// map it is given and AddIndexers writes into it.
//
// client-go: tools/cache/store.go NewIndexer
func newClientGoIx(names ...string) *clientGoIx {
	return &clientGoIx{cache.NewIndexer(cache.MetaNamespaceKeyFunc, clientGoIndexers(names))}
}

func clientGoIndexers(names []string) cache.Indexers {
	out := cache.Indexers{}
	typed := func(f func(*corev1.ConfigMap) []string) cache.IndexFunc {
		return func(obj any) ([]string, error) { return f(obj.(*corev1.ConfigMap)), nil }
	}
	for _, n := range names {
		switch n {
		case cache.NamespaceIndex:
			out[n] = cache.MetaNamespaceIndexFunc
		case "teams":
			out[n] = typed(teamsOf)
		case "app":
			out[n] = typed(appOf)
		case "none":
			out[n] = typed(noneOf)
		}
	}
	return out
}

func asCMs(list []any) []*corev1.ConfigMap {
	out := make([]*corev1.ConfigMap, len(list))
	for i, o := range list {
		out[i] = o.(*corev1.ConfigMap)
	}
	return out
}

func asCM(obj any) *corev1.ConfigMap {
	cm, _ := obj.(*corev1.ConfigMap)
	return cm
}

func (c *clientGoIx) add(cm *corev1.ConfigMap) error    { return c.ix.Add(cm) }
func (c *clientGoIx) update(cm *corev1.ConfigMap) error { return c.ix.Update(cm) }
func (c *clientGoIx) delete(cm *corev1.ConfigMap) error { return c.ix.Delete(cm) }
func (c *clientGoIx) replace(l []*corev1.ConfigMap, rv string) error {
	list := make([]any, len(l))
	for i, cm := range l {
		list[i] = cm
	}
	return c.ix.Replace(list, rv)
}
func (c *clientGoIx) addIndexers(names []string) error {
	return c.ix.AddIndexers(clientGoIndexers(names))
}
func (c *clientGoIx) list() []*corev1.ConfigMap { return asCMs(c.ix.List()) }
func (c *clientGoIx) listKeys() []string        { return c.ix.ListKeys() }
func (c *clientGoIx) get(cm *corev1.ConfigMap) (*corev1.ConfigMap, bool, error) {
	obj, ok, err := c.ix.Get(cm)
	return asCM(obj), ok, err
}
func (c *clientGoIx) getByKey(k string) (*corev1.ConfigMap, bool, error) {
	obj, ok, err := c.ix.GetByKey(k)
	return asCM(obj), ok, err
}
func (c *clientGoIx) index(n string, cm *corev1.ConfigMap) ([]*corev1.ConfigMap, error) {
	l, err := c.ix.Index(n, cm)
	return asCMs(l), err
}
func (c *clientGoIx) indexKeys(n, v string) ([]string, error) { return c.ix.IndexKeys(n, v) }
func (c *clientGoIx) byIndex(n, v string) ([]*corev1.ConfigMap, error) {
	l, err := c.ix.ByIndex(n, v)
	return asCMs(l), err
}
func (c *clientGoIx) listIndexFuncValues(n string) []string { return c.ix.ListIndexFuncValues(n) }
func (c *clientGoIx) indexerNames() []string {
	var names []string
	for n := range c.ix.GetIndexers() {
		names = append(names, n)
	}
	return names
}

// apply runs one op on one side and writes its error (only whether there was one: the
// libraries word errors differently).
func (o ixOp) apply(s ixSide, tr *check.Transcript) {
	var err error
	switch o.kind {
	case "Add":
		err = s.add(o.obj.build())
	case "Update":
		err = s.update(o.obj.build())
	case "Delete":
		err = s.delete(o.obj.build())
	case "Replace":
		err = s.replace(buildAll(o.list), o.rv)
	case "AddIndexers":
		err = s.addIndexers(o.names)
	}
	tr.Printf("%s: %s", o, errWord(err))
}

// ixValues are the values every index is queried for: each value an index can hold
// (the empty one too), and one that none holds.
var ixValues = []string{"", "ns1", "ns2", "a", "b", "c", "x", "y", "nope"}

// ixProbes are the objects Index and Get are asked about; none needs to be stored.
func ixProbes() []cmSpec {
	ab, empty, x := "a,b", "", "x"
	return []cmSpec{
		{NS: "ns1", Name: "a", Teams: &ab, App: &x},
		{NS: "", Name: "b", Teams: &empty},
		{NS: "ns2", Name: "c"},
	}
}

// observeIndexer writes every query's answer. Where client-go's order is a map's
// (List, ListKeys, ByIndex, Index, ListIndexFuncValues, GetIndexers) the answer is
// sorted before it is written; IndexKeys is sorted by both and written as returned.
// Contents are compared exactly: ListIndexFuncValues shows whether a value whose last
// key left is still listed (client-go deletes it: thread_safe_store.go
// storeIndex.deleteKeyFromIndex).
//
// client-go: tools/cache/thread_safe_store.go threadSafeMap.ByIndex
func observeIndexer(s ixSide, tr *check.Transcript) {
	tr.Printf("  List %s", describeSorted(s.list()))
	tr.Printf("  ListKeys %v", sortedStrings(s.listKeys()))
	tr.Printf("  GetIndexers %v", sortedStrings(s.indexerNames()))
	for _, k := range cmKeys() {
		obj, ok, err := s.getByKey(k)
		tr.Printf("  GetByKey(%q) %s %v %s", k, describe(obj), ok, errWord(err))
	}
	for _, p := range ixProbes() {
		obj, ok, err := s.get(p.build())
		tr.Printf("  Get(%s) %s %v %s", p.key(), describe(obj), ok, errWord(err))
	}
	for _, name := range append(ixIndexNames, "missing") {
		tr.Printf("  ListIndexFuncValues(%s) %q", name, sortedStrings(s.listIndexFuncValues(name)))
		for _, p := range ixProbes() {
			l, err := s.index(name, p.build())
			tr.Printf("  Index(%s, %s) %s %s", name, p, describeSorted(l), errWord(err))
		}
		for _, v := range ixValues {
			keys, err := s.indexKeys(name, v)
			tr.Printf("  IndexKeys(%s, %q) %q %s", name, v, keys, errWord(err))
			l, err := s.byIndex(name, v)
			tr.Printf("  ByIndex(%s, %q) %s %s", name, v, describeSorted(l), errWord(err))
		}
	}
}

// TestIndexer gives both indexers the same writes — adds, updates that move an object
// between index values, deletes, relists, and indexes added before and after there is
// data, one of them already registered — and after every write compares every query.
//
// client-go: tools/cache/thread_safe_store.go threadSafeMap.Replace
// client-go: tools/cache/thread_safe_store.go threadSafeMap.AddIndexers
// client-go: tools/cache/thread_safe_store.go storeIndex.updateSingleIndex
func TestIndexer(t *testing.T) {
	check.Run(t, check.Config[ixOp]{Runs: 200, Simplify: simplifyIndexerOp}, genIndexerOps,
		func(ops []ixOp) error {
			var oursTr, cgTr check.Transcript
			ours, cg := newOursIx(indexer.NamespaceIndex), newClientGoIx(cache.NamespaceIndex)
			for _, op := range ops {
				op.apply(ours, &oursTr)
				observeIndexer(ours, &oursTr)
				op.apply(cg, &cgTr)
				observeIndexer(cg, &cgTr)
			}
			return check.Transcripts(&oursTr, &cgTr)
		})
}
