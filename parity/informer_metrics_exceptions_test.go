package parity

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/testmetrics/informermetrics"
	"github.com/kubeinternals/informers/reflector"
)

// clientGoMetricsAsked records which informers client-go asked its provider for
// metrics, by the name and resource it gave.
type clientGoMetricsAsked struct {
	mu    sync.Mutex
	asked []string
}

func (p *clientGoMetricsAsked) ask(id cache.InformerNameAndResource, metric string) noopClientGoMetric {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, metric+"{"+id.Name()+","+id.GroupVersionResource().Resource+"}")
	return noopClientGoMetric{}
}

func (p *clientGoMetricsAsked) NewQueuedItemMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	return p.ask(id, "queued")
}

func (p *clientGoMetricsAsked) NewProcessingLatencyMetric(id cache.InformerNameAndResource) cache.HistogramMetric {
	return p.ask(id, "processing")
}

func (p *clientGoMetricsAsked) NewStoreResourceVersionMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	return p.ask(id, "store_rv")
}

func (p *clientGoMetricsAsked) names() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked...)
}

type noopClientGoMetric struct{}

func (noopClientGoMetric) Set(float64)     {}
func (noopClientGoMetric) Observe(float64) {}

// emptyLW answers both libraries' LIST with nothing and opens watches that stay
// silent: enough for an informer to build its queue and reflector, which is when the
// metrics are asked for.
type emptyLW struct{}

func (emptyLW) List(context.Context, metav1.ListOptions) (reflector.ListResult[*corev1.ConfigMap], error) {
	return reflector.ListResult[*corev1.ConfigMap]{ResourceVersion: "1"}, nil
}

func (emptyLW) Watch(context.Context, metav1.ListOptions) (reflector.Watch[*corev1.ConfigMap], error) {
	return reflector.NewFakeWatch[*corev1.ConfigMap](), nil
}

func emptyClientGoLW() *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}
}

// An informer's metrics: client-go asks its provider only for an informer given an
// Identifier, which comes from a process-wide InformerName (one informer per name and
// resource; a second NewInformerName of a name in use fails); an informer without one
// records nothing, provider or not. Ours asks the informer's own provider, for an
// unnamed informer too, under the Go type's name.
//
// client-go: tools/cache/informer_metrics.go newFIFOMetrics
// client-go: tools/cache/identity.go NewInformerName
var _ = exception("docs/defaults.md", "Informer and queue", "informer metrics", func(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()

		unnamed := &clientGoMetricsAsked{}
		their := cache.NewSharedIndexInformerWithOptions(emptyClientGoLW(), &corev1.ConfigMap{}, cache.SharedIndexInformerOptions{InformerMetricsProvider: unnamed})
		go their.RunWithContext(ctx)

		name, err := cache.NewInformerName("parity-informer")
		require.NoError(t, err)
		defer name.Release()
		_, err = cache.NewInformerName("parity-informer")
		require.Error(t, err, "client-go: one informer per name in the process")
		named := &clientGoMetricsAsked{}
		theirNamed := cache.NewSharedIndexInformerWithOptions(emptyClientGoLW(), &corev1.ConfigMap{}, cache.SharedIndexInformerOptions{
			InformerMetricsProvider: named,
			Identifier:              name.WithResource(corev1.SchemeGroupVersion.WithResource("configmaps")),
		})
		go theirNamed.RunWithContext(ctx)

		ours := &informermetrics.Recorder{}
		our := informer.NewSharedIndexInformer[*corev1.ConfigMap](emptyLW{}, informer.Options[*corev1.ConfigMap]{
			Logger: quiet, MetricsProvider: ours,
			InitialList: reflector.PagedList, // its empty LIST is a change the queue and the cache record at once
		})
		go our.Run(ctx)
		synctest.Wait()

		require.Empty(t, unnamed.names(), "client-go: an informer without an Identifier records nothing")
		require.Contains(t, named.names(), "queued{parity-informer,configmaps}", "client-go: a named informer does")
		require.Contains(t, ours.String(), "queued{*v1.ConfigMap}", "ours: the unnamed informer records, under its Go type")
		require.True(t, strings.Contains(ours.String(), "store_rv{*v1.ConfigMap}"), "ours: %s", ours.String())
		cancel()
		synctest.Wait()
	})
})
