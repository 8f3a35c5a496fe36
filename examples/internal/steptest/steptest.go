// Package steptest holds what the step programs' integration tests share: a buffer a
// program writes to while the test reads it, a core/v1 client to act on the cluster, and
// (readme.go) the checks that a README's sample output is what the program prints.
// It is test support, not a program; it is imported only by *_test.go files.
package steptest

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

// Buffer is an io.Writer safe to write from the program's goroutine while the test reads.
type Buffer struct {
	mu  sync.Mutex   // guards buf
	buf bytes.Buffer // guarded by mu
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// WaitFor waits until the output contains s (or fails the test after 30s).
func (b *Buffer) WaitFor(t *testing.T, s string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(b.String(), s) }, 30*time.Second, 20*time.Millisecond,
		"waiting for %q in the output:\n%s", s, b)
}

// Core returns a core/v1 REST client and creates namespace ns.
func Core(t *testing.T, ctx context.Context, cfg *rest.Config, ns string) rest.Interface {
	t.Helper()
	core := coreClient(t, cfg)
	require.NoError(t, core.Post().Resource("namespaces").Body(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}).Do(ctx).Error())
	return core
}

func coreClient(t *testing.T, cfg *rest.Config) rest.Interface {
	t.Helper()
	core, _, err := kube.NewRESTClient(cfg, corev1.SchemeGroupVersion, nil, corev1.AddToScheme)
	require.NoError(t, err)
	return core
}

// ConfigMap creates (or, with update, replaces) a ConfigMap holding data k=v.
func ConfigMap(t *testing.T, ctx context.Context, core rest.Interface, ns, name, v string, update bool) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"k": v}}
	req := core.Post().Namespace(ns).Resource("configmaps")
	if update {
		req = core.Put().Namespace(ns).Resource("configmaps").Name(name)
	}
	require.NoError(t, req.Body(cm).Do(ctx).Error())
}

// InWatchCache waits until a LIST at resourceVersion "0" — the kind of LIST a
// reflector starts with — returns the ConfigMap ns/name (or fails the test after 30s).
//
// Why: the API server answers a LIST at "0" from its watch cache without waiting for
// it to catch up with etcd, so an object created a moment before a program starts can
// be missing from that program's initial list and arrive as a watch ADDED instead. A
// test that asserts "it was in the initial list" waits for this first.
func InWatchCache(t *testing.T, ctx context.Context, core rest.Interface, ns, name string) {
	t.Helper()
	require.Eventually(t, func() bool {
		var list corev1.ConfigMapList
		if err := core.Get().Namespace(ns).Resource("configmaps").Param("resourceVersion", "0").Do(ctx).Into(&list); err != nil {
			return false
		}
		for _, cm := range list.Items {
			if cm.Name == name {
				return true
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond, "ConfigMap %s/%s never appeared in a LIST at resourceVersion 0", ns, name)
}

// MergePatch applies a JSON merge patch to a namespaced object, as `kubectl patch` and
// `kubectl label` do.
func MergePatch(t *testing.T, ctx context.Context, core rest.Interface, ns, resource, name, patch string) {
	t.Helper()
	require.NoError(t, core.Patch(types.MergePatchType).Namespace(ns).Resource(resource).Name(name).Body([]byte(patch)).Do(ctx).Error())
}

// Delete deletes a namespaced object.
func Delete(t *testing.T, ctx context.Context, core rest.Interface, ns, resource, name string) {
	t.Helper()
	require.NoError(t, core.Delete().Namespace(ns).Resource(resource).Name(name).Do(ctx).Error())
}

// Start runs program in a goroutine owned by the test, writing into a fresh Buffer, and
// returns that Buffer and a stop func that cancels the program and returns its error.
func Start(ctx context.Context, program func(ctx context.Context, out io.Writer) error) (*Buffer, func() error) {
	out := &Buffer{}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	// Goroutine owned by the test: the program, until stop cancels it.
	go func() { done <- program(runCtx, out) }()
	return out, func() error {
		cancel()
		return <-done
	}
}

// Cluster starts a fresh API server for the test (testenv's APIServer profile), creates
// namespace ns, and returns the config, a context that ends after a minute (or when the
// test ends), and a core/v1 client.
func Cluster(t *testing.T, ns string) (*rest.Config, context.Context, rest.Interface) {
	t.Helper()
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return env.Config, ctx, Core(t, ctx, env.Config, ns)
}
