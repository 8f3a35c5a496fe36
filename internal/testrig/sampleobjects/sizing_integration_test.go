package sampleobjects_test

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/sampleobjects"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
	"github.com/kubeinternals/informers/listwatch"
)

// sizingSmall and sizingLarge are the two caches of each kind and form the test
// measures: the bytes per object are the slope between them, so what an informer
// holds whatever its size (its goroutines' buffers, the connection, pooled blocks) is
// not divided into the objects' share.
const sizingSmall, sizingLarge = 1000, 3000

// sizingTolerance is how far a measured figure may be from the one docs/sizing.md
// states: the live heap of one process moves by a few percent with what the runtime
// and the HTTP client happen to keep.
const sizingTolerance = 0.10

// TestBytesPerCachedObjectAreWhatTheSizingPageSays syncs factory informers (RealFIFO
// fed by a watch-list, the namespace index) over 1,000 and over 3,000 Pods and
// ConfigMaps of the benchmarks' shapes, as whole objects, with managedFields stripped
// by a transform, and as metadata only, and measures the live heap each cache adds.
// The bytes per object — the slope from 1,000 to 3,000 — must be within 10% of the
// figure in docs/sizing.md's table.
func TestBytesPerCachedObjectAreWhatTheSizingPageSays(t *testing.T) {
	want := sizingTable(t)
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	for _, n := range []int{sizingSmall, sizingLarge} {
		require.NoError(t, sampleobjects.Create(ctx, env.Config, fmt.Sprintf("sizing-pods-%d", n), "pods", n, sampleobjects.Pod))
		require.NoError(t, sampleobjects.Create(ctx, env.Config, fmt.Sprintf("sizing-configmaps-%d", n), "configmaps", n, sampleobjects.ConfigMap))
	}
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	require.NoError(t, err)

	kinds := []struct {
		kind      string
		namespace string // with %d for the number of objects
		gvr       schema.GroupVersionResource
		whole     func(f *informer.Factory, res informer.Resource, strip bool) (func() int, error)
	}{
		{"Pod", "sizing-pods-%d", corev1.SchemeGroupVersion.WithResource("pods"), wholeObjects[*corev1.Pod]},
		{"ConfigMap", "sizing-configmaps-%d", corev1.SchemeGroupVersion.WithResource("configmaps"), wholeObjects[*corev1.ConfigMap]},
	}
	for _, k := range kinds {
		for _, form := range []string{"whole", "stripped", "metadata"} {
			name := k.kind + "/" + form
			cache := func(n int) int64 {
				res := informer.Resource{GVR: k.gvr, Namespace: fmt.Sprintf(k.namespace, n)}
				return cacheBytes(t, ctx, env, scheme, n, func(f *informer.Factory) (func() int, error) {
					if form == "metadata" {
						inf, err := informer.For[*metav1.PartialObjectMetadata](f, res)
						if err != nil {
							return nil, err
						}
						return func() int { return len(inf.Indexer().ListKeys()) }, nil
					}
					return k.whole(f, res, form == "stripped")
				})
			}
			small, large := cache(sizingSmall), cache(sizingLarge)
			got := float64(large-small) / (sizingLarge - sizingSmall)
			t.Logf("%-19s %5.0f B per cached object (%d objects: %d B, %d: %d B; besides the objects about %.0f kB)",
				name, got, sizingSmall, small, sizingLarge, large, (float64(small)-got*sizingSmall)/1000)
			w, ok := want[name]
			if !assert.True(t, ok, "docs/sizing.md has no row for %s", name) {
				continue
			}
			assert.InEpsilon(t, w, got, sizingTolerance, "%s: docs/sizing.md says %.0f B per object, measured %.0f B", name, w, got)
		}
	}
}

// wholeObjects is the typed informer of res, with a transform that drops
// managedFields if strip is set.
func wholeObjects[T indexer.Object](f *informer.Factory, res informer.Resource, strip bool) (func() int, error) {
	inf, err := informer.For[T](f, res)
	if err != nil {
		return nil, err
	}
	if strip {
		if err := inf.SetTransform(func(obj T) (T, error) {
			obj.SetManagedFields(nil)
			return obj, nil
		}); err != nil {
			return nil, err
		}
	}
	return func() int { return len(inf.Indexer().ListKeys()) }, nil
}

// cacheBytes measures the live heap a factory with one synced informer of n objects
// adds, informer included.
func cacheBytes(t *testing.T, ctx context.Context, env *testenv.Env, scheme *runtime.Scheme, n int, build func(*informer.Factory) (func() int, error)) int64 {
	t.Helper()
	before := liveHeap()
	f := informer.NewFactory(env.Config, informer.FactoryOptions{Scheme: scheme})
	cached, err := build(f)
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	f.Start(runCtx)
	require.NoError(t, f.WaitForCacheSync(ctx))
	require.Equal(t, n, cached())
	after := liveHeap()
	goruntime.KeepAlive(f)
	stop()
	f.Shutdown()
	return int64(after) - int64(before)
}

// liveHeap is the heap the garbage collector finds reachable, after two collections
// (what a sync.Pool holds survives one).
func liveHeap() uint64 {
	goruntime.GC()
	goruntime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// sizingTable reads docs/sizing.md's table: "Pod/whole" → bytes.
func sizingTable(t *testing.T) map[string]float64 {
	t.Helper()
	page, err := os.ReadFile("../../../docs/sizing.md")
	require.NoError(t, err)
	rows, err := sampleobjects.BytesPerCachedObject(page)
	require.NoError(t, err)
	return rows
}
