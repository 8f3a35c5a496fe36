package reflector_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/internal/metricstext"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
	"github.com/kubeinternals/informers/internal/testrig/testlog"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/reflector"
)

// droppingLW corrupts a watch-list on purpose: its watches leave out the ADDED event
// of one object, as a buggy server, proxy or cache would.
type droppingLW struct {
	reflector.ListerWatcher[*corev1.ConfigMap]
	dropName string
}

func (l droppingLW) Watch(ctx context.Context, opts metav1.ListOptions) (reflector.Watch[*corev1.ConfigMap], error) {
	inner, err := l.ListerWatcher.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	w := &droppingWatch{inner: inner, out: make(chan reflector.Event[*corev1.ConfigMap]), stopped: make(chan struct{})}
	// Goroutine owned by the watch: it forwards the inner stream and exits when the
	// inner stream closes (Stop stops it) or when Stop is called while it waits.
	go func() {
		defer close(w.out)
		for ev := range inner.ResultChan() {
			if ev.Type == watch.Added && ev.Object.Name == l.dropName {
				continue
			}
			select {
			case w.out <- ev:
			case <-w.stopped:
				return
			}
		}
	}()
	return w, nil
}

type droppingWatch struct {
	inner   reflector.Watch[*corev1.ConfigMap]
	out     chan reflector.Event[*corev1.ConfigMap]
	stopped chan struct{}
	once    sync.Once
}

func (w *droppingWatch) ResultChan() <-chan reflector.Event[*corev1.ConfigMap] { return w.out }
func (w *droppingWatch) Stop() {
	w.once.Do(func() { close(w.stopped) })
	w.inner.Stop()
}

// checkedReflector runs a watch-list reflector with CheckWatchList over the
// ConfigMaps of namespace, through wrap, and returns its calls, its store, the
// differences it reported and its logs.
func checkedReflector(t *testing.T, core *rest.RESTClient, namespace string, wrap func(reflector.ListerWatcher[*corev1.ConfigMap]) reflector.ListerWatcher[*corev1.ConfigMap]) (*recordingLW[*corev1.ConfigMap], *mapStore[*corev1.ConfigMap], func() []*reflector.InconsistencyError, *testlog.Recorder) {
	t.Helper()
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	require.NoError(t, err)
	inner, err := listwatch.New[*corev1.ConfigMap](core, listwatch.Options{Resource: "configmaps", Namespace: namespace, Scheme: scheme, Protobuf: true})
	require.NoError(t, err)
	lw := newRecordingLW(wrap(inner))
	store := newMapStore[*corev1.ConfigMap]()
	logs := &testlog.Recorder{}
	var mu sync.Mutex
	var found []*reflector.InconsistencyError
	r, err := reflector.NewReflector[*corev1.ConfigMap](lw, store, reflector.Options[*corev1.ConfigMap]{
		Name: namespace, Logger: slog.New(logs), CheckWatchList: true,
		OnInconsistency: func(err *reflector.InconsistencyError) {
			mu.Lock()
			defer mu.Unlock()
			found = append(found, err)
		},
	})
	require.NoError(t, err)
	runReflector(t, r)
	<-store.replaced
	return lw, store, func() []*reflector.InconsistencyError {
		mu.Lock()
		defer mu.Unlock()
		return append([]*reflector.InconsistencyError(nil), found...)
	}, logs
}

func TestIntegrationTheWatchListCheckAgreesWithTheAPIServer(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	core := integrationClient(t, env, corev1.SchemeGroupVersion)
	createNamespace(t, ctx, core, "checked")
	require.NoError(t, createConfigMaps(ctx, core, "checked", "cm", 30, nil))

	listsBefore := configMapListsServed(t, ctx, core)
	lw, store, found, logs := checkedReflector(t, core, "checked", func(lw reflector.ListerWatcher[*corev1.ConfigMap]) reflector.ListerWatcher[*corev1.ConfigMap] {
		return lw
	})
	eventually(t, ctx, "the check has run", func() bool { return len(logs.Lines("watch-list consistency check passed")) == 1 })
	listsAfter := configMapListsServed(t, ctx, core)
	eventually(t, ctx, "the store matches a direct LIST", converged(t, ctx, core, "checked", "", store))
	calls := lw.Calls()
	require.Len(t, calls, 2, "%v", calls)
	assert.Equal(t, `watch rv="" match=NotOlderThan sendInitialEvents`, calls[0].String())
	assert.Regexp(t, `^list rv="\d+" match=Exact$`, calls[1].String(), "the check LISTs at the end bookmark's RV")
	// Pitfall: an Exact LIST is not a read from etcd. With ListFromCacheSnapshot (beta,
	// on since 1.34) the apiserver answers it from its watch cache's snapshot of that
	// RV, the same cache that served the stream.
	assert.Equal(t, map[string]int{"watchcache": listsBefore["watchcache"] + 1, "etcd": listsBefore["etcd"]}, listsAfter,
		"the check's LIST was served from the watch cache (apiserver_storage_list_total)")
	assert.Empty(t, found())
	assert.Empty(t, logs.Lines("skipped"), "the apiserver answered the Exact LIST")
	assert.Len(t, logs.Lines("watch-list consistency check passed"), 1)
}

func TestIntegrationTheWatchListCheckNamesAnObjectTheStreamLeftOut(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	core := integrationClient(t, env, corev1.SchemeGroupVersion)
	createNamespace(t, ctx, core, "corrupt")
	require.NoError(t, createConfigMaps(ctx, core, "corrupt", "cm", 10, nil))
	var dropped corev1.ConfigMap
	require.NoError(t, core.Get().Namespace("corrupt").Resource("configmaps").Name("cm-3").Do(ctx).Into(&dropped))

	_, store, found, logs := checkedReflector(t, core, "corrupt", func(lw reflector.ListerWatcher[*corev1.ConfigMap]) reflector.ListerWatcher[*corev1.ConfigMap] {
		return droppingLW{ListerWatcher: lw, dropName: "cm-3"}
	})
	require.Len(t, found(), 1)
	assert.Equal(t, []reflector.Difference{{Key: "corrupt/cm-3", UID: dropped.UID, Listed: dropped.ResourceVersion}}, found()[0].Differences)
	assert.Contains(t, found()[0].Error(), "corrupt/cm-3")
	assert.Len(t, logs.Lines("ERROR watch-list inconsistent"), 1)
	assert.Contains(t, store.Versions(), "corrupt/cm-3", "the store got the LIST's objects, the dropped one too")
	eventually(t, ctx, "the store matches a direct LIST", converged(t, ctx, core, "corrupt", "", store))
	assert.Equal(t, 1, store.Replaces(), "no relist: the watch went on from the bookmark")
}

// configMapListsServed reads the apiserver's apiserver_storage_list_total for
// ConfigMaps: how many LISTs it served from each storage, "watchcache" or "etcd".
func configMapListsServed(t *testing.T, ctx context.Context, core *rest.RESTClient) map[string]int {
	t.Helper()
	body, err := core.Get().AbsPath("/metrics").DoRaw(ctx)
	require.NoError(t, err)
	series, err := metricstext.Parse(bytes.NewReader(body))
	require.NoError(t, err)
	served := map[string]int{"watchcache": 0, "etcd": 0}
	for s, v := range series {
		if !strings.HasPrefix(s, "apiserver_storage_list_total{") || !strings.Contains(s, `resource="configmaps"`) {
			continue
		}
		for storage := range served {
			if strings.Contains(s, `storage="`+storage+`"`) {
				served[storage] += int(v)
			}
		}
	}
	return served
}
