package parity

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/reflector"
)

// forbidden is what an informer without RBAC for its resource gets on every request.
func forbidden() error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", nil)
}

// forbiddenLW fails every LIST and WATCH of ours with 403 Forbidden.
type forbiddenLW struct{}

func (forbiddenLW) List(context.Context, metav1.ListOptions) (reflector.ListResult[*corev1.ConfigMap], error) {
	return reflector.ListResult[*corev1.ConfigMap]{}, forbidden()
}

func (forbiddenLW) Watch(context.Context, metav1.ListOptions) (reflector.Watch[*corev1.ConfigMap], error) {
	return nil, forbidden()
}

// forbiddenClientGoInformer is a client-go informer whose every LIST and WATCH fails
// with 403 Forbidden.
func forbiddenClientGoInformer() cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc:  func(context.Context, metav1.ListOptions) (runtime.Object, error) { return nil, forbidden() },
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return nil, forbidden() },
	}
	return cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
}

// Waiting for an informer that can never sync (403 on every request): client-go's
// WaitForCacheSync polls HasSynced every 100 ms until its stop channel closes and
// returns false, with no reason; ours returns at once, with an error that wraps
// ErrNotSynced and carries the 403.
//
// client-go: tools/cache/shared_informer.go WaitForCacheSync
// The error handlers are emptied first (withoutErrorBackoff says why).
var _ = exception("docs/defaults.md", "Informer and queue", "waiting for sync", func(t *testing.T) {
	withoutErrorBackoff(t)
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		their := forbiddenClientGoInformer()
		go their.RunWithContext(ctx)
		stop := make(chan struct{})
		time.AfterFunc(2*time.Second, func() { close(stop) })
		var polls atomic.Int32
		start := time.Now()
		synced := cache.WaitForCacheSync(stop, func() bool { polls.Add(1); return their.HasSynced() })
		require.False(t, synced, "client-go: false, and nothing says why")
		require.Equal(t, 2*time.Second, time.Since(start), "client-go: until its stop channel closes")
		require.GreaterOrEqual(t, polls.Load(), int32(19), "client-go: polled every 100ms")

		our := informer.NewSharedIndexInformer[*corev1.ConfigMap](forbiddenLW{}, informer.Options[*corev1.ConfigMap]{Logger: quiet})
		go our.Run(ctx)
		waitCtx, cancelWait := context.WithTimeout(ctx, 2*time.Second)
		defer cancelWait()
		start = time.Now()
		err := informer.WaitForCacheSync(waitCtx, our)
		require.ErrorIs(t, err, informer.ErrNotSynced, "ours")
		require.True(t, apierrors.IsForbidden(err), "ours: the error carries the 403: %v", err)
		require.Less(t, time.Since(start), 2*time.Second, "ours: at once, not at the deadline")
		cancel()
		synctest.Wait()
	})
})
