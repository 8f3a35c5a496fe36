package parity

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/kubeinternals/informers/informer"
)

// Where an informer's logs go, shown with a LIST that fails with 403 (both libraries
// log it): client-go's informer logs to the logger in the context given to
// RunWithContext, not to klog's global one; ours to the slog.Logger it was built with —
// slog.Default() as it was when the informer was built, even if the default changes
// later.
//
// The error handlers keep client-go's logging and drop its rate limiter, which sleeps
// for decades in a synctest bubble (see withoutErrorBackoff, which drops both).
//
// client-go: tools/cache/shared_informer.go sharedIndexInformer.RunWithContext
var _ = exception("docs/defaults.md", "Informer and queue", "where logs go", func(t *testing.T) {
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = saved[:1] // logError alone
	defer func() { utilruntime.ErrorHandlers = saved }()
	var global, inContext lines
	klog.SetLogger(global.logr())
	defer klog.ClearLogger()
	savedDefault := slog.Default()
	defer slog.SetDefault(savedDefault)

	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		their := forbiddenClientGoInformer()
		go their.RunWithContext(klog.NewContext(ctx, inContext.logr()))

		var atBuild, later lines
		slog.SetDefault(slog.New(slog.NewTextHandler(&atBuild, nil)))
		our := informer.NewSharedIndexInformer[*corev1.ConfigMap](forbiddenLW{}, informer.Options[*corev1.ConfigMap]{})
		slog.SetDefault(slog.New(slog.NewTextHandler(&later, nil)))
		go our.Run(ctx)
		synctest.Wait()
		cancel()
		synctest.Wait()

		require.Contains(t, inContext.String(), "forbidden", "client-go: the context's logger")
		require.NotContains(t, global.String(), "forbidden", "client-go: not klog's global logger")
		require.Contains(t, atBuild.String(), "forbidden", "ours: slog.Default() when the informer was built")
		require.False(t, strings.Contains(later.String(), "forbidden"), "ours: not the default set afterwards: %s", later.String())
	})
})
