package parity

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/deltafifo"
)

// A DeltaFIFO built with its options' zero values: client-go's Replace queues Sync
// deltas unless EmitDeltaTypeReplaced is set (only its informers set it); ours always
// queues Replaced. TestDeltaFIFO compares the two with client-go's option on, as its
// informers run it.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFOOptions
var _ = exception("docs/defaults.md", "Informer and queue", "a DeltaFIFO built directly", func(t *testing.T) {
	their := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc, Logger: &quietKlog})
	require.NoError(t, their.Replace([]any{configMap("a", 1)}, "1"))
	_, err := their.Pop(func(obj any, _ bool) error {
		require.Equal(t, cache.Sync, obj.(cache.Deltas)[0].Type, "client-go without the option")
		return nil
	})
	require.NoError(t, err)

	our := deltafifo.NewDeltaFIFO(deltafifo.DeltaFIFOOptions[*corev1.ConfigMap]{Logger: quiet})
	require.NoError(t, our.Replace([]*corev1.ConfigMap{configMap("a", 1)}, "1"))
	require.NoError(t, our.Pop(context.Background(), func(d deltafifo.Deltas[*corev1.ConfigMap], _ bool) error {
		require.Equal(t, deltafifo.Replaced, d[0].Type, "ours, which has no option")
		return nil
	}))
})

// While the consumer processes the last key of the first list, client-go's DeltaFIFO
// has already closed its synced channel (it counts the key down before calling process);
// ours closes it after process returns, so nothing woken by it reads a cache that still
// lacks that key. TestDeltaFIFO reads HasSynced only between calls, where the two agree.
//
// client-go: tools/cache/delta_fifo.go DeltaFIFO.Pop
var _ = exception("docs/parity.md", "Differences found by the suite", "DeltaFIFO synced while the last listed key is processed", func(t *testing.T) {
	their := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc, EmitDeltaTypeReplaced: true, Logger: &quietKlog})
	require.NoError(t, their.Replace([]any{configMap("a", 1)}, "1"))
	_, err := their.Pop(func(_ any, initial bool) error {
		require.True(t, initial)
		// HasSynced would deadlock here: it takes the lock Pop holds. Done does not.
		require.True(t, isClosed(their.Done()), "client-go: synced while its last initial key is processed")
		return nil
	})
	require.NoError(t, err)

	our := deltafifo.NewDeltaFIFO(deltafifo.DeltaFIFOOptions[*corev1.ConfigMap]{Logger: quiet})
	require.NoError(t, our.Replace([]*corev1.ConfigMap{configMap("a", 1)}, "1"))
	require.NoError(t, our.Pop(context.Background(), func(_ deltafifo.Deltas[*corev1.ConfigMap], initial bool) error {
		require.True(t, initial)
		require.False(t, isClosed(our.Synced()), "ours: not synced until the last initial key is processed")
		require.False(t, our.HasSynced())
		return nil
	}))
	require.True(t, isClosed(our.Synced()), "ours: synced once process returned")
})
