package informer_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/listwatch"
)

// offlineFactory returns a factory whose apiserver is never dialled: For makes no
// request, and these tests never Start it (or cancel it at once).
func offlineFactory(t *testing.T, logger *slog.Logger) *informer.Factory {
	t.Helper()
	scheme, err := listwatch.NewScheme(corev1.AddToScheme, appsv1.AddToScheme)
	require.NoError(t, err)
	return informer.NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, informer.FactoryOptions{Scheme: scheme, Logger: logger})
}

var (
	configMapsGVR  = corev1.SchemeGroupVersion.WithResource("configmaps")
	endpointsGVR   = corev1.SchemeGroupVersion.WithResource("endpoints")
	deploymentsGVR = appsv1.SchemeGroupVersion.WithResource("deployments")
)

func TestForChecksTheTypeAgainstTheResource(t *testing.T) {
	f := offlineFactory(t, nil)
	cases := []struct {
		name    string
		for_    func() error
		wantErr string
	}{
		{"a Secret type on configmaps is refused, naming the kind configmaps holds", func() error {
			_, err := informer.For[*corev1.Secret](f, informer.Resource{GVR: configMapsGVR})
			return err
		}, "configmaps holds ConfigMap objects, not Secret"},
		{"a type of another group/version is refused", func() error {
			_, err := informer.For[*corev1.ConfigMap](f, informer.Resource{GVR: deploymentsGVR})
			return err
		}, "*v1.ConfigMap is v1, but the resource is in apps/v1"},
		{"a type the scheme does not know is refused", func() error {
			_, err := informer.For[*corev1.Secret](informer.NewFactory(&rest.Config{}, informer.FactoryOptions{Scheme: mustScheme(t, appsv1.AddToScheme)}), informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("secrets")})
			return err
		}, "is not registered in FactoryOptions.Scheme"},
		{"the matching type is accepted", func() error {
			_, err := informer.For[*corev1.ConfigMap](f, informer.Resource{GVR: configMapsGVR})
			return err
		}, ""},
		{"an irregular plural (Endpoints → endpoints) is accepted", func() error {
			//lint:ignore SA1019 Endpoints is deprecated, but it is the built-in kind whose resource is its lowercase name
			_, err := informer.For[*corev1.Endpoints](f, informer.Resource{GVR: endpointsGVR})
			return err
		}, ""},
		{"unstructured objects fit any resource", func() error {
			_, err := informer.For[*unstructured.Unstructured](f, informer.Resource{GVR: deploymentsGVR})
			return err
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.for_()
			if c.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, informer.ErrWrongType)
			assert.Contains(t, err.Error(), c.wantErr)
		})
	}
}

func mustScheme(t *testing.T, add ...func(*runtime.Scheme) error) *runtime.Scheme {
	t.Helper()
	s, err := listwatch.NewScheme(add...)
	require.NoError(t, err)
	return s
}

func TestForAddsIndexers(t *testing.T) {
	byApp := indexer.Indexers[*corev1.ConfigMap]{"byApp": func(cm *corev1.ConfigMap) ([]string, error) {
		return []string{cm.Labels["app"]}, nil
	}}
	byOwner := indexer.Indexers[*corev1.ConfigMap]{"byOwner": func(cm *corev1.ConfigMap) ([]string, error) {
		return []string{cm.Annotations["owner"]}, nil
	}}
	res := informer.Resource{GVR: configMapsGVR}

	t.Run("the indexes given to For are in the cache, beside the namespace index", func(t *testing.T) {
		f := offlineFactory(t, nil)
		inf, err := informer.For(f, res, byApp)
		require.NoError(t, err)
		a := cm("a")
		a.Labels = map[string]string{"app": "web"}
		require.NoError(t, inf.Indexer().Add(a))
		got, err := inf.Indexer().ByIndex("byApp", "web")
		require.NoError(t, err)
		assert.Len(t, got, 1)
		_, err = inf.Indexer().ByIndex(indexer.NamespaceIndex, "default")
		assert.NoError(t, err)
	})
	t.Run("a later For of the shared informer adds its indexes to the same cache", func(t *testing.T) {
		f := offlineFactory(t, nil)
		first, err := informer.For(f, res, byApp)
		require.NoError(t, err)
		second, err := informer.For(f, res, byOwner)
		require.NoError(t, err)
		require.Same(t, first, second)
		_, err = first.Indexer().ByIndex("byOwner", "x")
		assert.NoError(t, err)
	})
	t.Run("an index name registered twice is an error", func(t *testing.T) {
		f := offlineFactory(t, nil)
		_, err := informer.For(f, res, byApp)
		require.NoError(t, err)
		_, err = informer.For(f, res, byApp)
		require.ErrorIs(t, err, indexer.ErrIndexConflict)
		_, err = informer.For(offlineFactory(t, nil), res, indexer.Indexers[*corev1.ConfigMap]{indexer.NamespaceIndex: indexer.MetaNamespaceIndexFunc[*corev1.ConfigMap]})
		require.ErrorIs(t, err, indexer.ErrIndexConflict, "the namespace index is already there")
	})
}

func TestFactoryWaitForCacheSyncNamesAnInformerThatWasNeverStarted(t *testing.T) {
	f := offlineFactory(t, nil)
	_, err := informer.For[*corev1.ConfigMap](f, informer.Resource{GVR: configMapsGVR, Namespace: "web"})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Start runs the informer until ctx ends: at once, no request needed
	f.Start(ctx)
	defer f.Shutdown()
	_, err = informer.For[*appsv1.Deployment](f, informer.Resource{GVR: deploymentsGVR, LabelSelector: "app=web"})
	require.NoError(t, err)

	err = f.WaitForCacheSync(context.Background())
	require.ErrorIs(t, err, informer.ErrNotStarted)
	assert.Contains(t, err.Error(), `deployments.apps with labels "app=web"`)
	assert.NotContains(t, err.Error(), "configmaps", "the started informer is not named")
}

func TestFactoryInformersLogTheirNamespaceAndSelectors(t *testing.T) {
	var buf bytes.Buffer
	f := offlineFactory(t, slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	for _, ns := range []string{"a", "b"} {
		_, err := informer.For[*corev1.ConfigMap](f, informer.Resource{GVR: configMapsGVR, Namespace: ns, LabelSelector: "team=x"})
		require.NoError(t, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // each reflector logs "starting reflector" and stops at once
	f.Start(ctx)
	f.Shutdown()
	var starts []string
	for line := range strings.Lines(buf.String()) {
		if strings.Contains(line, "starting reflector") {
			starts = append(starts, line)
		}
	}
	require.Len(t, starts, 2)
	for _, ns := range []string{"a", "b"} {
		assert.True(t, slices.ContainsFunc(starts, func(l string) bool {
			return strings.Contains(l, "namespace="+ns+` labelSelector="team=x"`) && strings.Contains(l, "informer=configmaps")
		}), "a start line names namespace %s and the selector: %q", ns, starts)
	}
}
