package informer

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
)

// addFakeInformer puts an informer over src into f, as For would for res, but without
// a REST client: inside a synctest bubble nothing may dial.
func addFakeInformer(f *Factory, res string, src *fakeapi.Server[*corev1.ConfigMap]) *SharedIndexInformer[*corev1.ConfigMap] {
	r := Resource{GVR: corev1.SchemeGroupVersion.WithResource(res)}
	inf := NewSharedIndexInformer[*corev1.ConfigMap](src, Options[*corev1.ConfigMap]{Name: res, Logger: slog.New(slog.DiscardHandler)})
	inf.description = r.String()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.informers[factoryKey{res: r, typ: reflect.TypeFor[*corev1.ConfigMap]()}] = inf
	return inf
}

func TestAFactoryReportsEachStuckInformerItStartedByName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, FactoryOptions{})
		quiet, busy := fakeapi.New[*corev1.ConfigMap](), fakeapi.New[*corev1.ConfigMap]()
		addFakeInformer(f, "secrets", quiet)
		addFakeInformer(f, "configmaps", busy)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f.Start(ctx)
		defer f.Shutdown()
		require.NoError(t, f.WaitForCacheSync(ctx))
		notStarted := fakeapi.New[*corev1.ConfigMap]()
		addFakeInformer(f, "endpoints", notStarted) // after Start: never runs, never checked

		assert.NoError(t, f.WatchHealthy(0), "both just synced")
		for range 3 {
			time.Sleep(time.Minute)
			busy.Bookmark()
			synctest.Wait()
		}
		err := f.WatchHealthy(0)
		require.ErrorIs(t, err, ErrWatchStuck)
		assert.Equal(t, "watch stuck (secrets): its watch is open but has delivered nothing — no event, no bookmark — for 3m0s, longer than 2m0s", err.Error(),
			"only the silent informer, by its resource")

		time.Sleep(3 * time.Minute)
		err = f.WatchHealthy(0)
		require.ErrorIs(t, err, ErrWatchStuck)
		lines := strings.Split(err.Error(), "\n")
		require.Len(t, lines, 2, "one line per stuck informer: %s", err)
		assert.True(t, strings.HasPrefix(lines[0], "watch stuck (configmaps): "), lines[0])
		assert.True(t, strings.HasPrefix(lines[1], "watch stuck (secrets): "), lines[1])

		busy.Bookmark()
		quiet.Bookmark()
		synctest.Wait()
		assert.NoError(t, f.WatchHealthy(0), "both delivered a bookmark")
	})
}
