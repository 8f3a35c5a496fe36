package informer_test

import (
	"log/slog"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/fakeapi"
)

// useDefaultLogger points slog.Default() at a buffer for the test and restores it.
// Pitfall: slog's default is process-wide, so a test using it must not run in
// parallel with another that does.
func useDefaultLogger(t *testing.T) *logBuffer {
	t.Helper()
	logs := &logBuffer{}
	prev := slog.Default()
	slog.SetDefault(logs.logger())
	t.Cleanup(func() { slog.SetDefault(prev) })
	return logs
}

func TestWithoutALoggerARecoveredPanicIsLoggedToSlogDefault(t *testing.T) {
	for _, q := range queueKinds {
		t.Run("with "+q.name, func(t *testing.T) {
			logs := useDefaultLogger(t)
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				inf := newInformer(q.kind, src, informer.Options[*corev1.ConfigMap]{})
				_, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
					AddFunc: func(*corev1.ConfigMap, bool) { panic("boom") },
				})
				require.NoError(t, err)
				running(t, inf)
				synctest.Wait()
				src.Create(cm("bad"))
				synctest.Wait()
			})
			assert.Contains(t, logs.String(), "boom", "a nil Logger means slog.Default(), so the recovered panic is seen")
			assert.Contains(t, logs.String(), "key=ns/bad")
		})
	}
}

func TestADiscardingLoggerIsAnExplicitChoice(t *testing.T) {
	logs := useDefaultLogger(t)
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		inf := newInformer(informer.RealFIFOQueue, src, informer.Options[*corev1.ConfigMap]{Logger: slog.New(slog.DiscardHandler)})
		_, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
			AddFunc: func(*corev1.ConfigMap, bool) { panic("boom") },
		})
		require.NoError(t, err)
		running(t, inf)
		synctest.Wait()
		src.Create(cm("bad"))
		synctest.Wait()
	})
	assert.NotContains(t, logs.String(), "boom")
}
