package parity

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	clientgoinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/listwatch"
)

// emptyAPIServer answers, in JSON, what an informer of ConfigMaps or Secrets asks: an
// empty LIST, and a watch that starts with the bookmark ending a watch-list's initial
// events (none) and then stays open until the client leaves.
func emptyAPIServer(t *testing.T) *rest.Config {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := map[string]string{"configmaps": "ConfigMap", "secrets": "Secret"}[r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]]
		if kind == "" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") != "true" {
			fmt.Fprintf(w, `{"kind":"%sList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`, kind)
			return
		}
		fmt.Fprintf(w, `{"type":"BOOKMARK","object":{"kind":"%s","apiVersion":"v1","metadata":{"resourceVersion":"1","annotations":{"k8s.io/initial-events-end":"true"}}}}`+"\n", kind)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}
}

// An informer requested from a factory after Start: client-go's WaitForCacheSync skips
// it and reports the others synced, while its cache stays empty; ours returns an error
// wrapping ErrNotStarted that names it.
//
// client-go: informers/factory.go sharedInformerFactory.WaitForCacheSyncWithContext
var _ = exception("docs/defaults.md", "Informer and queue", "a factory informer requested after `Start`", func(t *testing.T) {
	cfg := emptyAPIServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	their := clientgoinformers.NewSharedInformerFactory(cs, 0)
	their.Core().V1().ConfigMaps().Informer()
	their.Start(ctx.Done())
	late := their.Core().V1().Secrets().Informer()
	synced := their.WaitForCacheSync(ctx.Done())
	require.Equal(t, map[reflect.Type]bool{reflect.TypeFor[*corev1.ConfigMap](): true}, synced, "client-go: the late informer is not in the answer")
	require.False(t, late.HasSynced(), "client-go: and its cache is empty")

	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	require.NoError(t, err)
	our := informer.NewFactory(cfg, informer.FactoryOptions{Scheme: scheme, Logger: quiet})
	_, err = informer.For[*corev1.ConfigMap](our, informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("configmaps")})
	require.NoError(t, err)
	our.Start(ctx)
	_, err = informer.For[*corev1.Secret](our, informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("secrets")})
	require.NoError(t, err)
	err = our.WaitForCacheSync(ctx)
	require.ErrorIs(t, err, informer.ErrNotStarted, "ours")
	require.ErrorContains(t, err, "secrets", "ours: the error names it")

	cancel()
	their.Shutdown()
	our.Shutdown()
})
