package promprovider

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
)

// An informer over the in-memory API server, three updates, and the scrape shows its
// reflector's, queue's, cache's and handler's series under the library's names.
func TestTheInformerMetricsCoverEveryStage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		p, err := New(reg)
		require.NoError(t, err)
		src := fakeapi.New[*corev1.ConfigMap]()
		obj := src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}})
		inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](src, informer.Options[*corev1.ConfigMap]{Name: "cms", MetricsProvider: p})
		_, err = inf.AddEventHandlerWithOptions(informer.HandlerFuncs[*corev1.ConfigMap]{}, informer.HandlerOptions{Name: "h"})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		// Goroutine owned by this test: the informer, stopped below.
		go func() { defer close(done); inf.Run(ctx) }()
		synctest.Wait()
		for range 3 {
			obj = src.Update(obj)
		}
		synctest.Wait()

		text := scrape(t, reg)
		for _, line := range []string{
			`reflector_lists_total{name="cms"} 1`,
			`reflector_watch_events_total{name="cms",type="MODIFIED"} 3`,
			`reflector_watches_total{name="cms"} 1`,
			`reflector_watch_open{name="cms"} 1`,
			`informer_queued_items{name="cms"} 0`,
			`informer_store_resource_version{name="cms"} ` + src.ResourceVersion(),
			`informer_handler_duration_seconds_count{handler="h",name="cms"} 4`,
			`informer_handler_backlog{handler="h",name="cms"} 0`,
		} {
			assert.Contains(t, text, line+"\n")
		}
		assert.Contains(t, text, `informer_processing_latency_seconds_count{name="cms"}`)
		cancel()
		<-done
	})
}

// A removed handler's series leave the scrape; the other handler's stay.
func TestARemovedHandlersSeriesLeaveTheScrape(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		p, err := New(reg)
		require.NoError(t, err)
		src := fakeapi.New[*corev1.ConfigMap]()
		src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}})
		inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](src, informer.Options[*corev1.ConfigMap]{Name: "cms", MetricsProvider: p})
		gone, err := inf.AddEventHandlerWithOptions(informer.HandlerFuncs[*corev1.ConfigMap]{}, informer.HandlerOptions{Name: "gone"})
		require.NoError(t, err)
		_, err = inf.AddEventHandlerWithOptions(informer.HandlerFuncs[*corev1.ConfigMap]{}, informer.HandlerOptions{Name: "kept"})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		// Goroutine owned by this test: the informer, stopped below.
		go func() { defer close(done); inf.Run(ctx) }()
		synctest.Wait()
		require.Contains(t, scrape(t, reg), `informer_handler_duration_seconds_count{handler="gone",name="cms"} 1`)

		inf.RemoveEventHandler(gone)
		synctest.Wait()
		text := scrape(t, reg)
		assert.NotContains(t, text, `handler="gone"`)
		for _, line := range []string{
			`informer_handler_duration_seconds_count{handler="kept",name="cms"} 1`,
			`informer_handler_backlog{handler="kept",name="cms"} 0`,
			`informer_handler_backlog_high_water{handler="kept",name="cms"} 1`,
		} {
			assert.Contains(t, text, line+"\n")
		}
		cancel()
		<-done
	})
}
