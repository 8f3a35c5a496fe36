package indexer

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// The model-based test drives random operation sequences against the store and against
// a naive model (a plain map, with every index recomputed from scratch on each query)
// and compares every observable after every operation.

var errStrictTeam = errors.New("team x is not allowed")

// modelIndexers is every index a sequence may register: the store starts with the first
// two; AddIndexers picks among all of them (so it also hits name conflicts).
var modelIndexers = map[string]IndexFunc[*corev1.ConfigMap]{
	NamespaceIndex: MetaNamespaceIndexFunc[*corev1.ConfigMap],
	"app":          failOnPoison, // fails on a "poison" label
	"fin":          byFinalizer,  // several values, duplicates possible
	"team": func(c *corev1.ConfigMap) ([]string, error) {
		if t, ok := c.Labels["team"]; ok {
			return []string{t}, nil
		}
		return nil, nil
	},
	"strictTeam": func(c *corev1.ConfigMap) ([]string, error) {
		if c.Labels["team"] == "x" {
			return nil, errStrictTeam
		}
		return []string{"t-" + c.Labels["team"]}, nil
	},
}

var modelKeys = func() [][2]string {
	var keys [][2]string
	for _, ns := range []string{"", "ns1", "ns2", "ns3"} {
		for _, n := range []string{"a", "b", "c", "d", "e"} {
			keys = append(keys, [2]string{ns, n})
		}
	}
	return keys
}()

type model struct {
	items    map[string]*corev1.ConfigMap
	indexers map[string]IndexFunc[*corev1.ConfigMap]
}

// valuesOf returns obj's values in every registered index, or the first error.
func (m *model) valuesOf(obj *corev1.ConfigMap) error {
	for _, name := range slices.Sorted(maps.Keys(m.indexers)) {
		if _, err := m.indexers[name](obj); err != nil {
			return err
		}
	}
	return nil
}

// index recomputes one index from scratch: value → sorted keys.
func (m *model) index(name string) map[string][]string {
	out := map[string][]string{}
	for key, obj := range m.items {
		values, _ := m.indexers[name](obj)
		for _, v := range values {
			if !slices.Contains(out[v], key) {
				out[v] = append(out[v], key)
			}
		}
	}
	for v := range out {
		slices.Sort(out[v])
	}
	return out
}

func randomCM(r *rand.Rand) *corev1.ConfigMap {
	k := modelKeys[r.IntN(len(modelKeys))]
	var lbls []string
	if app := []string{"", "web", "db", "cache"}[r.IntN(4)]; app != "" {
		lbls = append(lbls, "app", app)
	}
	if team := []string{"", "a", "b", "x"}[r.IntN(4)]; team != "" {
		lbls = append(lbls, "team", team)
	}
	if r.IntN(20) == 0 {
		lbls = append(lbls, "poison", "1")
	}
	c := cm(k[0], k[1], lbls...)
	for range r.IntN(4) {
		c.Finalizers = append(c.Finalizers, []string{"f1", "f2", "f3"}[r.IntN(3)])
	}
	c.Data = map[string]string{"v": fmt.Sprint(r.Int())}
	return c
}

func TestModel(t *testing.T) {
	const sequences, opsPerSequence = 60, 150
	for seed := range uint64(sequences) {
		t.Run(fmt.Sprintf("seed %d matches the naive model after every operation", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			start := Indexers[*corev1.ConfigMap]{
				NamespaceIndex: modelIndexers[NamespaceIndex], "app": modelIndexers["app"],
			}
			s := New(Options[*corev1.ConfigMap]{Indexers: start})
			m := &model{items: map[string]*corev1.ConfigMap{}, indexers: maps.Clone(start)}

			for step := range opsPerSequence {
				desc := runModelOp(t, r, s, m)
				checkModel(t, s, m, r, fmt.Sprintf("step %d (%s)", step, desc))
			}
		})
	}
}

// runModelOp applies one random operation to both the store and the model and checks
// the store's error against the model's expectation. It returns a description.
func runModelOp(t *testing.T, r *rand.Rand, s Indexer[*corev1.ConfigMap], m *model) string {
	switch op := r.IntN(10); {
	case op < 4: // Add or Update
		obj := randomCM(r)
		key := ObjectKey(obj.Namespace, obj.Name)
		var err error
		if op < 2 {
			err = s.Add(obj)
		} else {
			err = s.Update(obj)
		}
		want := m.valuesOf(obj)
		if want != nil {
			require.ErrorIs(t, err, ErrIndexFunc)
			require.ErrorIs(t, err, want)
		} else {
			require.NoError(t, err)
			m.items[key] = obj
		}
		return "put " + key
	case op < 7: // Delete, often of an absent key
		obj := randomCM(r)
		key := ObjectKey(obj.Namespace, obj.Name)
		require.NoError(t, s.Delete(obj))
		delete(m.items, key)
		return "delete " + key
	case op < 9: // Replace
		list := make([]*corev1.ConfigMap, r.IntN(12))
		next := map[string]*corev1.ConfigMap{}
		var want error
		for i := range list {
			list[i] = randomCM(r)
			next[ObjectKey(list[i].Namespace, list[i].Name)] = list[i]
			if err := m.valuesOf(list[i]); err != nil && want == nil {
				want = err
			}
		}
		err := s.Replace(list, "")
		if want != nil {
			require.ErrorIs(t, err, ErrIndexFunc)
		} else {
			require.NoError(t, err)
			m.items = next
		}
		return fmt.Sprintf("replace with %d", len(list))
	default: // AddIndexers of one or two names
		all := slices.Sorted(maps.Keys(modelIndexers))
		add := Indexers[*corev1.ConfigMap]{}
		for range 1 + r.IntN(2) {
			name := all[r.IntN(len(all))]
			add[name] = modelIndexers[name]
		}
		err := s.AddIndexers(add)
		conflict, failing := false, false
		for name, fn := range add {
			if _, ok := m.indexers[name]; ok {
				conflict = true
			}
			for _, obj := range m.items {
				if _, err := fn(obj); err != nil {
					failing = true
				}
			}
		}
		switch {
		case conflict:
			require.ErrorIs(t, err, ErrIndexConflict)
		case failing:
			require.ErrorIs(t, err, ErrIndexFunc)
		default:
			require.NoError(t, err)
			maps.Copy(m.indexers, add)
		}
		return fmt.Sprintf("add indexers %v", slices.Sorted(maps.Keys(add)))
	}
}

// checkModel compares every observable of the store with the model.
func checkModel(t *testing.T, s Indexer[*corev1.ConfigMap], m *model, r *rand.Rand, at string) {
	wantKeys := slices.Sorted(maps.Keys(m.items))
	require.Equal(t, wantKeys, sorted(s.ListKeys()), "ListKeys at %s", at)
	require.Equal(t, wantKeys, names(s.List()), "List at %s", at)
	for _, k := range modelKeys {
		key := ObjectKey(k[0], k[1])
		got, ok, err := s.GetByKey(key)
		require.NoError(t, err)
		want, wantOK := m.items[key]
		require.Equal(t, wantOK, ok, "GetByKey(%s) at %s", key, at)
		require.Same(t, want, got, "GetByKey(%s) at %s", key, at)
	}
	require.Equal(t, slices.Sorted(maps.Keys(m.indexers)), slices.Sorted(maps.Keys(s.GetIndexers())), "GetIndexers at %s", at)

	for name := range modelIndexers {
		if _, registered := m.indexers[name]; !registered {
			_, err := s.ByIndex(name, "x")
			require.ErrorIs(t, err, ErrUnknownIndex, "ByIndex(%s) at %s", name, at)
			continue
		}
		want := m.index(name)
		require.Equal(t, slices.Sorted(maps.Keys(want)), sorted(s.ListIndexFuncValues(name)),
			"ListIndexFuncValues(%s) at %s", name, at)
		for value, keys := range want {
			gotKeys, err := s.IndexKeys(name, value)
			require.NoError(t, err)
			require.Equal(t, keys, gotKeys, "IndexKeys(%s, %s) at %s", name, value, at)

			objs, err := s.ByIndex(name, value)
			require.NoError(t, err)
			require.Len(t, objs, len(keys), "ByIndex(%s, %s) at %s", name, value, at)
			for _, obj := range objs {
				require.Same(t, m.items[ObjectKey(obj.Namespace, obj.Name)], obj,
					"ByIndex(%s, %s) returns the current object at %s", name, value, at)
			}
		}

		// Index with a random probe: the union of the probe's values, each object once.
		probe := randomCM(r)
		probeValues, err := m.indexers[name](probe)
		got, gotErr := s.Index(name, probe)
		if err != nil {
			require.ErrorIs(t, gotErr, err)
			continue
		}
		require.NoError(t, gotErr)
		var wantIndex []string
		for _, v := range probeValues {
			for _, k := range want[v] {
				if !slices.Contains(wantIndex, k) {
					wantIndex = append(wantIndex, k)
				}
			}
		}
		slices.Sort(wantIndex)
		require.Equal(t, wantIndex, names(got), "Index(%s, probe) at %s", name, at)
	}
}
