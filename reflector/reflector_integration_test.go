package reflector_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/reflector"
)

// configMapReflector builds a reflector for ConfigMaps in namespace, recording its
// calls, into a fresh mapStore.
func configMapReflector(t *testing.T, core rest.Interface, lwOpts listwatch.Options, opts reflector.Options[*corev1.ConfigMap]) (*reflector.Reflector[*corev1.ConfigMap], *recordingLW[*corev1.ConfigMap], *mapStore[*corev1.ConfigMap]) {
	t.Helper()
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	require.NoError(t, err)
	lwOpts.Resource, lwOpts.Scheme = "configmaps", scheme
	inner, err := listwatch.New[*corev1.ConfigMap](core, lwOpts)
	require.NoError(t, err)
	lw := newRecordingLW[*corev1.ConfigMap](inner)
	store := newMapStore[*corev1.ConfigMap]()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	r, err := reflector.NewReflector[*corev1.ConfigMap](lw, store, opts)
	require.NoError(t, err)
	return r, lw, store
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

func TestIntegrationListWatchMatchesADirectList(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	core := integrationClient(t, env, corev1.SchemeGroupVersion)
	createNamespace(t, ctx, core, "refl")
	web := map[string]string{"app": "web"}
	require.NoError(t, createConfigMaps(ctx, core, "refl", "web", 20, web))
	require.NoError(t, createConfigMaps(ctx, core, "refl", "other", 5, nil))

	for _, protobuf := range []bool{false, true} {
		r, _, store := configMapReflector(t, core, listwatch.Options{Namespace: "refl", LabelSelector: "app=web", Protobuf: protobuf}, reflector.Options[*corev1.ConfigMap]{Name: fmt.Sprintf("protobuf=%v", protobuf)})
		runReflector(t, r)
		<-store.replaced
		eventually(t, ctx, "the first list matches", converged(t, ctx, core, "refl", "app=web", store))
		defer func() {
			eventually(t, ctx, fmt.Sprintf("protobuf=%v converges after the writes", protobuf), converged(t, ctx, core, "refl", "app=web", store))
			assert.Equal(t, 1, store.Replaces(), "no relist was needed")
			assert.NotEmpty(t, r.LastSyncResourceVersion())
		}()
	}

	// Writes after both reflectors are watching: creates, updates, deletes, and an
	// object that leaves the selector (which the watch reports as a delete).
	require.NoError(t, createConfigMaps(ctx, core, "refl", "late", 10, web))
	for i := range 5 {
		cm := newConfigMap("refl", fmt.Sprintf("web-%d", i), web)
		cm.Data["updated"] = "yes"
		body, err := jsonMarshal(cm)
		require.NoError(t, err)
		require.NoError(t, core.Put().Namespace("refl").Resource("configmaps").Name(cm.Name).Body(body).SetHeader("Content-Type", "application/json").Do(ctx).Error())
	}
	for i := 5; i < 10; i++ {
		require.NoError(t, core.Delete().Namespace("refl").Resource("configmaps").Name(fmt.Sprintf("web-%d", i)).Do(ctx).Error())
	}
	unlabelled := newConfigMap("refl", "web-10", nil)
	body, err := jsonMarshal(unlabelled)
	require.NoError(t, err)
	require.NoError(t, core.Put().Namespace("refl").Resource("configmaps").Name("web-10").Body(body).SetHeader("Content-Type", "application/json").Do(ctx).Error())
}

func TestIntegrationA410FromCompactionCausesARelistAndTheStoreConverges(t *testing.T) {
	// With the watch cache off, watches are served by etcd, so a watch from a
	// compacted revision really gets 410 Gone.
	env := testenv.Start(t, testenv.Options{APIServerFlags: []string{"--watch-cache=false"}})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	core := integrationClient(t, env, corev1.SchemeGroupVersion)
	createNamespace(t, ctx, core, "compact")
	require.NoError(t, createConfigMaps(ctx, core, "compact", "cm", 10, nil))

	r, lw, store := configMapReflector(t, core, listwatch.Options{Namespace: "compact"}, reflector.Options[*corev1.ConfigMap]{InitialList: reflector.PagedList})
	runReflector(t, r)
	<-store.replaced
	eventually(t, ctx, "the first list matches", converged(t, ctx, core, "compact", "", store))

	// An event on the current watch, so that cutting it is not a "very short watch"
	// (which would relist for another reason).
	require.NoError(t, createConfigMaps(ctx, core, "compact", "before-cut", 1, nil))
	eventually(t, ctx, "the watch delivered the create", converged(t, ctx, core, "compact", "", store))

	// Hold the next watch, cut the current one, write while nobody watches, compact
	// etcd past the reflector's RV, then let it re-watch from that RV.
	release := lw.Hold()
	lw.Cut()
	require.NoError(t, createConfigMaps(ctx, core, "compact", "late", 5, nil))
	require.NoError(t, core.Delete().Namespace("compact").Resource("configmaps").Name("cm-0").Do(ctx).Error())
	_, err := env.CompactEtcd(ctx)
	require.NoError(t, err)
	before := len(lw.Calls())
	staleRV := r.LastSyncResourceVersion()
	release()

	eventually(t, ctx, "the store converges after the relist", converged(t, ctx, core, "compact", "", store))
	var after []string
	for _, c := range lw.Calls()[before:] {
		after = append(after, c.String())
	}
	require.GreaterOrEqual(t, len(after), 2, "calls after the compaction: %v", after)
	assert.Equal(t, fmt.Sprintf("watch rv=%q", staleRV), after[0], "the re-watch starts from the compacted RV")
	assert.Equal(t, fmt.Sprintf("list rv=%q", staleRV), after[1], "the 410 made it relist at its last RV")
	assert.Equal(t, 2, store.Replaces())
}

func TestIntegrationPagingWithTheWatchCacheOff(t *testing.T) {
	env := testenv.Start(t, testenv.Options{APIServerFlags: []string{"--watch-cache=false"}})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	core := integrationClient(t, env, corev1.SchemeGroupVersion)
	createNamespace(t, ctx, core, "paged")
	require.NoError(t, createConfigMaps(ctx, core, "paged", "cm", 200, nil))

	r, lw, store := configMapReflector(t, core, listwatch.Options{Namespace: "paged"}, reflector.Options[*corev1.ConfigMap]{InitialList: reflector.PagedList, PageSize: 50})
	runReflector(t, r)
	<-store.replaced
	assert.Len(t, store.Versions(), 200)

	var lists []string
	for _, c := range lw.Calls() {
		if c.verb == "list" {
			lists = append(lists, c.String())
		}
	}
	require.Len(t, lists, 4, "200 objects in pages of 50: %v", lists)
	assert.Equal(t, `list rv="0" limit=50`, lists[0])
	for _, l := range lists[1:] {
		assert.Regexp(t, `^list rv="" limit=50 continue=\S+$`, l)
	}
	conts := lw.Continues()
	require.Len(t, conts, 4)
	assert.Empty(t, conts[3], "the last page has no continue token")
}

func TestIntegrationWatchListReceivesTheInitialEventsEndBookmark(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	core := integrationClient(t, env, corev1.SchemeGroupVersion)
	createNamespace(t, ctx, core, "stream")
	require.NoError(t, createConfigMaps(ctx, core, "stream", "cm", 30, nil))

	r, lw, store := configMapReflector(t, core, listwatch.Options{Namespace: "stream", Protobuf: true}, reflector.Options[*corev1.ConfigMap]{InitialList: reflector.WatchList})
	runReflector(t, r)
	<-store.replaced
	assert.Len(t, store.Versions(), 30)
	require.NoError(t, createConfigMaps(ctx, core, "stream", "late", 3, nil))
	eventually(t, ctx, "the store converges", converged(t, ctx, core, "stream", "", store))

	calls := lw.Calls()
	require.Len(t, calls, 1, "one watch-list request, no LIST, and the same watch goes on: %v", calls)
	assert.Equal(t, `watch rv="" match=NotOlderThan sendInitialEvents`, calls[0].String())
	assert.Equal(t, 1, store.Replaces())
}

func TestIntegrationTheStoreConvergesAfterTheAPIServerRestarts(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	core := integrationClient(t, env, corev1.SchemeGroupVersion)
	createNamespace(t, ctx, core, "restart")
	require.NoError(t, createConfigMaps(ctx, core, "restart", "cm", 10, nil))

	r, lw, store := configMapReflector(t, core, listwatch.Options{Namespace: "restart"}, reflector.Options[*corev1.ConfigMap]{})
	runReflector(t, r)
	<-store.replaced

	require.NoError(t, env.RestartAPIServer(ctx))
	require.NoError(t, createConfigMaps(ctx, core, "restart", "late", 5, nil))
	require.NoError(t, core.Delete().Namespace("restart").Resource("configmaps").Name("cm-3").Do(ctx).Error())
	eventually(t, ctx, "the store converges after the restart", converged(t, ctx, core, "restart", "", store))
	t.Logf("calls: %v", lw.Calls())
}

func TestIntegrationACustomResourceThroughUnstructured(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	ext := integrationClient(t, env, schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"})
	crd := []byte(`{
	  "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
	  "metadata": {"name": "widgets.example.com"},
	  "spec": {"group": "example.com", "scope": "Namespaced",
	    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
	    "versions": [{"name": "v1", "served": true, "storage": true,
	      "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}}]}}`)
	require.NoError(t, ext.Post().Resource("customresourcedefinitions").Body(crd).SetHeader("Content-Type", "application/json").Do(ctx).Error())

	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	widgets := integrationClient(t, env, gv)
	widget := func(name string, size int) []byte {
		return []byte(fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":%q,"namespace":"default"},"spec":{"size":%d}}`, name, size))
	}
	// The CRD takes a moment to be served.
	eventually(t, ctx, "the CRD is served", func() bool {
		return widgets.Post().Namespace("default").Resource("widgets").Body(widget("w0", 0)).SetHeader("Content-Type", "application/json").Do(ctx).Error() == nil
	})

	lw, err := listwatch.New[*unstructured.Unstructured](widgets, listwatch.Options{Resource: "widgets", Namespace: "default"})
	require.NoError(t, err)
	store := newMapStore[*unstructured.Unstructured]()
	r, err := reflector.NewReflector[*unstructured.Unstructured](lw, store, reflector.Options[*unstructured.Unstructured]{Name: "widgets"})
	require.NoError(t, err)
	runReflector(t, r)
	<-store.replaced
	for i := 1; i <= 3; i++ {
		require.NoError(t, widgets.Post().Namespace("default").Resource("widgets").Body(widget(fmt.Sprintf("w%d", i), i)).SetHeader("Content-Type", "application/json").Do(ctx).Error())
	}
	require.NoError(t, widgets.Delete().Namespace("default").Resource("widgets").Name("w0").Do(ctx).Error())

	eventually(t, ctx, "the store holds w1..w3", func() bool {
		v := store.Versions()
		return len(v) == 3 && v["default/w1"] != "" && v["default/w2"] != "" && v["default/w3"] != ""
	})
	store.mu.Lock()
	w3 := store.objects["default/w3"]
	store.mu.Unlock()
	size, found, err := unstructured.NestedInt64(w3.Object, "spec", "size")
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, int64(3), size)
	assert.Equal(t, "Widget", w3.GetKind())
}

// The watch-list buffer (initialEvents) needs no map for a stream in increasing key
// order. This is the fact it relies on: the kube-apiserver sends the initial events
// so, across namespaces too — here "wl-b" (whose keys sort before "wl/…", '-' being
// before '/') and "wl", with objects created out of key order (cm-10 before cm-2).
func TestIntegrationTheInitialEventsOfAWatchListArriveInKeyOrder(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	core := integrationClient(t, env, corev1.SchemeGroupVersion)
	for _, ns := range []string{"wl", "wl-b"} {
		createNamespace(t, ctx, core, ns)
		require.NoError(t, createConfigMaps(ctx, core, ns, "cm", 25, nil))
	}
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	require.NoError(t, err)
	for _, protobuf := range []bool{false, true} {
		lw, err := listwatch.New[*corev1.ConfigMap](core, listwatch.Options{Resource: "configmaps", Scheme: scheme, Protobuf: protobuf})
		require.NoError(t, err)
		yes := true
		w, err := lw.Watch(ctx, metav1.ListOptions{SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
		require.NoError(t, err)
		var keys []string
		var items []*corev1.ConfigMap
		for ev := range w.ResultChan() {
			if ev.Type == watch.Bookmark && ev.Object.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
				break
			}
			require.Equal(t, watch.Added, ev.Type)
			keys = append(keys, key(ev.Object))
			items = append(items, ev.Object)
		}
		w.Stop()
		assert.GreaterOrEqual(t, len(keys), 50, "protobuf=%v", protobuf)
		assert.True(t, slices.IsSorted(keys), "protobuf=%v: %v", protobuf, keys)
		noMap, listed, err := reflector.BufferWithoutAMap(items)
		require.NoError(t, err)
		assert.True(t, noMap, "protobuf=%v: the buffer needed a map", protobuf)
		assert.Equal(t, len(keys), listed)
	}
}
