package informer_test

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
)

func TestMutationCacheHandlerReportsEachChangeToTheCache(t *testing.T) {
	at := func(rv string) *corev1.ConfigMap { c := cm("a"); c.UID, c.ResourceVersion = "u1", rv; return c }
	store := indexer.New(indexer.Options[*corev1.ConfigMap]{})
	mc, err := indexer.NewMutationCache(store, indexer.MutationCacheOptions{IncludeAdds: true, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	h := informer.MutationCacheHandler(mc)
	read := func() string {
		obj, exists, err := mc.GetByKey("ns/a")
		require.NoError(t, err)
		if !exists {
			return "missing"
		}
		return obj.ResourceVersion
	}

	mc.Mutation(at("2"))
	h.OnAdd(at("2"), false)
	assert.Equal(t, "missing", read(), "OnAdd reported the created object: the write is forgotten (the store has no copy yet)")

	require.NoError(t, store.Add(at("2")))
	mc.Mutation(at("4"))
	h.OnUpdate(at("2"), at("3"))
	assert.Equal(t, "4", read(), "OnUpdate reports the new object (3), older than the write")
	h.OnUpdate(at("3"), at("4"))
	require.NoError(t, store.Update(at("1")))
	assert.Equal(t, "1", read(), "OnUpdate reported 4: the write is forgotten")

	require.NoError(t, store.Delete(at("4")))
	h.OnDelete(informer.DeletedObject[*corev1.ConfigMap]{OptionalObj: at("4")})
	mc.Mutation(at("5"))
	assert.Equal(t, "missing", read(), "OnDelete was reported: a later write of the same UID is stale")

	assert.NotPanics(t, func() { h.OnDelete(informer.DeletedObject[*corev1.ConfigMap]{}) }, "no object, nothing to report")
}
