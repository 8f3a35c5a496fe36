package informer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
)

func TestFilteringHandlerTurnsBoundaryCrossingUpdatesIntoAddsAndDeletes(t *testing.T) {
	matching := func(c *corev1.ConfigMap) bool { return c.Labels["team"] == "a" }
	in := func(name string) *corev1.ConfigMap {
		c := cm(name)
		c.Labels = map[string]string{"team": "a"}
		return c
	}
	out := cm
	cases := []struct {
		name     string
		old, new *corev1.ConfigMap
		want     []string
	}{
		{"both match: the update passes", in("x"), in("x"), []string{"update x"}},
		{"starts matching: an add", out("x"), in("x"), []string{"add x"}},
		{"stops matching: a delete", in("x"), out("x"), []string{"delete x"}},
		{"matches neither: nothing", out("x"), out("x"), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{}
			informer.FilteringHandler[*corev1.ConfigMap]{FilterFunc: matching, Handler: rec}.OnUpdate(c.old, c.new)
			assert.Equal(t, c.want, rec.summary())
		})
	}
	t.Run("adds and deletes pass only when the object matches", func(t *testing.T) {
		rec := &recorder{}
		h := informer.FilteringHandler[*corev1.ConfigMap]{FilterFunc: matching, Handler: rec}
		h.OnAdd(in("a"), true)
		h.OnAdd(out("b"), true)
		h.OnDelete(informer.DeletedObject[*corev1.ConfigMap]{OptionalObj: in("a")})
		h.OnDelete(informer.DeletedObject[*corev1.ConfigMap]{OptionalObj: out("b")})
		assert.Equal(t, []string{"add a", "delete a"}, rec.summary())
	})
}

func TestHandlerFuncsSkipsNilFuncs(t *testing.T) {
	h := informer.HandlerFuncs[*corev1.ConfigMap]{}
	assert.NotPanics(t, func() {
		h.OnAdd(cm("a"), false)
		h.OnUpdate(cm("a"), cm("a"))
		h.OnDelete(informer.DeletedObject[*corev1.ConfigMap]{OptionalObj: cm("a")})
	})
}
