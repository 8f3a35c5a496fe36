package informer_test

import (
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
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

// A nil Logger means slog.Default(), so a recovered handler panic is seen; silence
// is a choice made by passing a discarding logger.
func TestWithoutALoggerARecoveredPanicIsLoggedToSlogDefault(t *testing.T) {
	discard := slog.New(slog.DiscardHandler)
	for _, q := range pipelines {
		for _, c := range []struct {
			name    string
			logger  *slog.Logger
			wantLog bool
		}{{"no logger: slog.Default()", nil, true}, {"a discarding logger, by choice", discard, false}} {
			t.Run(q.name+"/"+c.name, func(t *testing.T) {
				logs := useDefaultLogger(t)
				synctest.Test(t, func(t *testing.T) {
					src := fakeapi.New[*corev1.ConfigMap]()
					inf := newInformer(q, src, informer.Options[*corev1.ConfigMap]{Logger: c.logger})
					_, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
						AddFunc: func(*corev1.ConfigMap, bool) { panic("boom") },
					})
					require.NoError(t, err)
					running(t, inf)
					synctest.Wait()
					src.Create(cm("bad"))
					synctest.Wait()
				})
				if !c.wantLog {
					assert.NotContains(t, logs.String(), "boom")
					return
				}
				assert.Contains(t, logs.String(), "boom")
				assert.Contains(t, logs.String(), "key=ns/bad")
			})
		}
	}
}

// panickingAdd panics on every add: a named function, so the stack names it.
func panickingAdd(*corev1.ConfigMap, bool) { panic("boom") }

// A recovered handler panic is logged with its stack trace, which names the handler
// function that panicked, as client-go's HandleCrash logs the stack.
func TestARecoveredPanicIsLoggedWithItsStack(t *testing.T) {
	for _, q := range pipelines {
		t.Run(q.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs logBuffer
				src := fakeapi.New[*corev1.ConfigMap]()
				inf := newInformer(q, src, informer.Options[*corev1.ConfigMap]{Logger: logs.logger()})
				_, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: panickingAdd})
				require.NoError(t, err)
				running(t, inf)
				synctest.Wait()
				src.Create(cm("bad"))
				synctest.Wait()
				var line string
				for l := range strings.Lines(logs.String()) {
					if strings.Contains(l, "event handler panicked") {
						line = l
					}
				}
				require.NotEmpty(t, line, logs.String())
				assert.Contains(t, line, "key=ns/bad")
				assert.Contains(t, line, " stack=")
				assert.Contains(t, line, "informer_test.panickingAdd", "the stack names the handler")
				assert.Contains(t, line, "panic(", "and starts at the panic")
			})
		})
	}
}
