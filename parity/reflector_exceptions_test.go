package parity

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/deltafifo"
	"github.com/kubeinternals/informers/reflector"
)

// A reflector built without a name: client-go names it after the first caller whose
// path does not contain "client-go/tools/cache/" — meant to be the caller's file:line,
// but from the module cache the path reads "client-go@v0.N.N/tools/cache/", so the
// first such frame is client-go's own reflector.go (found by this test, which first
// expected this file's name). Ours is named after the Go type it lists, the same
// wherever it was built.
//
// client-go: tools/cache/reflector.go NewReflectorWithOptions
var _ = exception("docs/defaults.md", "Reflector", "reflector name", func(t *testing.T) {
	their := cache.NewReflector(&cache.ListWatch{}, &corev1.ConfigMap{}, cache.NewStore(cache.MetaNamespaceKeyFunc), 0)
	require.Regexp(t, regexp.MustCompile(`^pkg/mod/k8s\.io/client-go@v[0-9.]+/tools/cache/reflector\.go:\d+$`), their.Name(), "client-go: its own file:line")

	// Never run: the reflector is only named, so its ListerWatcher is never called.
	var lw struct {
		reflector.ListerWatcher[*corev1.ConfigMap]
	}
	our, err := reflector.NewReflector(lw, deltafifo.NewRealFIFO(deltafifo.RealFIFOOptions[*corev1.ConfigMap]{Logger: quiet}), reflector.Options[*corev1.ConfigMap]{Logger: quiet})
	require.NoError(t, err)
	require.Equal(t, "*v1.ConfigMap", our.Name(), "ours: the Go type")
})
