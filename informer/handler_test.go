package informer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
)

// Both adapters are handlers; a change to the interface that they miss fails to compile.
var (
	_ informer.ResourceEventHandler[*corev1.ConfigMap] = informer.HandlerFuncs[*corev1.ConfigMap]{}
	_ informer.ResourceEventHandler[*corev1.ConfigMap] = informer.FilteringHandler[*corev1.ConfigMap]{}
)

// call is one handler call with its exact arguments, to compare by identity.
type call struct {
	method          string // OnAdd, OnUpdate, OnDelete
	obj, old        *corev1.ConfigMap
	isInInitialList bool
	deleted         informer.DeletedObject[*corev1.ConfigMap]
}

// spy is a handler that keeps each call's arguments.
type spy struct{ calls []call }

func (s *spy) OnAdd(obj *corev1.ConfigMap, isInInitialList bool) {
	s.calls = append(s.calls, call{method: "OnAdd", obj: obj, isInInitialList: isInInitialList})
}

func (s *spy) OnUpdate(old, obj *corev1.ConfigMap) {
	s.calls = append(s.calls, call{method: "OnUpdate", obj: obj, old: old})
}

func (s *spy) OnDelete(d informer.DeletedObject[*corev1.ConfigMap]) {
	s.calls = append(s.calls, call{method: "OnDelete", deleted: d})
}

func TestFilteringHandlerTurnsBoundaryCrossingUpdatesIntoAddsAndDeletes(t *testing.T) {
	matching := func(c *corev1.ConfigMap) bool { return c.Labels["team"] == "a" }
	in := func(name string) *corev1.ConfigMap {
		c := cm(name)
		c.Labels = map[string]string{"team": "a"}
		return c
	}
	out := cm
	oldIn, newIn, oldOut, newOut := in("x"), in("x"), out("x"), out("x")
	cases := []struct {
		name     string
		old, new *corev1.ConfigMap
		want     []call
	}{
		{"both match: the update passes as it came", oldIn, newIn,
			[]call{{method: "OnUpdate", old: oldIn, obj: newIn}}},
		{"starts matching: an add of the new object, not in the initial list", oldOut, newIn,
			[]call{{method: "OnAdd", obj: newIn, isInInitialList: false}}},
		{"stops matching: a delete of the old object, without a tombstone", oldIn, newOut,
			[]call{{method: "OnDelete", deleted: informer.DeletedObject[*corev1.ConfigMap]{OptionalObj: oldIn}}}},
		{"matches neither: nothing", oldOut, newOut, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inner := &spy{}
			informer.FilteringHandler[*corev1.ConfigMap]{FilterFunc: matching, Handler: inner}.OnUpdate(c.old, c.new)
			assert.Equal(t, c.want, inner.calls)
			for i := range c.want {
				assert.Same(t, c.want[i].obj, inner.calls[i].obj)
				assert.Same(t, c.want[i].old, inner.calls[i].old)
				assert.Same(t, c.want[i].deleted.OptionalObj, inner.calls[i].deleted.OptionalObj)
			}
		})
	}
	t.Run("an add passes only when the object matches, with its isInInitialList", func(t *testing.T) {
		inner := &spy{}
		h := informer.FilteringHandler[*corev1.ConfigMap]{FilterFunc: matching, Handler: inner}
		initial, later := in("initial"), in("later")
		h.OnAdd(initial, true)
		h.OnAdd(later, false)
		h.OnAdd(out("other"), true)
		assert.Equal(t, []call{
			{method: "OnAdd", obj: initial, isInInitialList: true},
			{method: "OnAdd", obj: later, isInInitialList: false},
		}, inner.calls)
	})
	t.Run("a delete passes only when its object matches, and passes unchanged, tombstone and all", func(t *testing.T) {
		inner := &spy{}
		var filtered []*corev1.ConfigMap
		h := informer.FilteringHandler[*corev1.ConfigMap]{Handler: inner, FilterFunc: func(c *corev1.ConfigMap) bool {
			filtered = append(filtered, c)
			return matching(c)
		}}
		last := in("a")
		inferred := informer.DeletedObject[*corev1.ConfigMap]{OptionalObj: last,
			FinalStateUnknown: &indexer.DeletedFinalStateUnknown[*corev1.ConfigMap]{Key: "ns/a", Obj: last}}
		other := out("b")
		h.OnDelete(inferred)
		h.OnDelete(informer.DeletedObject[*corev1.ConfigMap]{OptionalObj: other})
		assert.Equal(t, []call{{method: "OnDelete", deleted: inferred}}, inner.calls)
		assert.Same(t, inferred.FinalStateUnknown, inner.calls[0].deleted.FinalStateUnknown)
		assert.Equal(t, []*corev1.ConfigMap{last, other}, filtered, "the filter is asked about OptionalObj")
	})
}

func TestHandlerFuncsPassesEachCallOnUnchanged(t *testing.T) {
	var got []call
	h := informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(obj *corev1.ConfigMap, isInInitialList bool) {
			got = append(got, call{method: "OnAdd", obj: obj, isInInitialList: isInInitialList})
		},
		UpdateFunc: func(old, obj *corev1.ConfigMap) { got = append(got, call{method: "OnUpdate", old: old, obj: obj}) },
		DeleteFunc: func(d informer.DeletedObject[*corev1.ConfigMap]) {
			got = append(got, call{method: "OnDelete", deleted: d})
		},
	}
	a, b := cm("a"), cm("b")
	inferred := informer.DeletedObject[*corev1.ConfigMap]{OptionalObj: a,
		FinalStateUnknown: &indexer.DeletedFinalStateUnknown[*corev1.ConfigMap]{Key: "ns/a", Obj: a}}
	h.OnAdd(a, true)
	h.OnAdd(b, false)
	h.OnUpdate(a, b)
	h.OnDelete(inferred)
	assert.Equal(t, []call{
		{method: "OnAdd", obj: a, isInInitialList: true},
		{method: "OnAdd", obj: b, isInInitialList: false},
		{method: "OnUpdate", old: a, obj: b},
		{method: "OnDelete", deleted: inferred},
	}, got)
	assert.Same(t, a, got[2].old, "old first, new second")
	assert.Same(t, inferred.FinalStateUnknown, got[3].deleted.FinalStateUnknown)
}

func TestHandlerFuncsSkipsNilFuncs(t *testing.T) {
	h := informer.HandlerFuncs[*corev1.ConfigMap]{}
	assert.NotPanics(t, func() {
		h.OnAdd(cm("a"), false)
		h.OnUpdate(cm("a"), cm("a"))
		h.OnDelete(informer.DeletedObject[*corev1.ConfigMap]{OptionalObj: cm("a")})
	})
}
