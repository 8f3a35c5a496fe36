package reflector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/internal/objects"
	"github.com/kubeinternals/informers/internal/testrig/sampleobjects"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/reflector"
)

// mapStore is the plainest Store: a map from namespace/name to the object.
type mapStore[T reflector.Object] struct {
	mu       sync.Mutex
	objects  map[string]T // guarded by mu
	replaces int          // guarded by mu
	replaced chan struct{}
	once     sync.Once
}

func newMapStore[T reflector.Object]() *mapStore[T] {
	return &mapStore[T]{objects: map[string]T{}, replaced: make(chan struct{})}
}

func key(o reflector.Object) string { return objects.Key(o.GetNamespace(), o.GetName()) }

func (s *mapStore[T]) Add(o T) error    { return s.put(o) }
func (s *mapStore[T]) Update(o T) error { return s.put(o) }
func (s *mapStore[T]) put(o T) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[key(o)] = o
	return nil
}
func (s *mapStore[T]) Delete(o T) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objects, key(o))
	return nil
}
func (s *mapStore[T]) Replace(items []T, _ string) error {
	m := make(map[string]T, len(items))
	for _, o := range items {
		m[key(o)] = o
	}
	s.mu.Lock()
	s.objects = m
	s.replaces++
	s.mu.Unlock()
	s.once.Do(func() { close(s.replaced) })
	return nil
}
func (s *mapStore[T]) Resync() error { return nil }

// Versions returns namespace/name → resourceVersion of everything stored.
func (s *mapStore[T]) Versions() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.objects))
	for k, o := range s.objects {
		out[k] = o.GetResourceVersion()
	}
	return out
}

func (s *mapStore[T]) Replaces() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replaces
}

// call is one List or Watch call recordingLW passed on.
type call struct {
	verb string
	opts metav1.ListOptions
}

func (c call) String() string { return reflector.DescribeCall(c.verb, c.opts) }

// recordingLW wraps a ListerWatcher: it records every call, can hold watches back
// (gate), and can cut the current watch as a network failure would.
type recordingLW[T reflector.Object] struct {
	inner reflector.ListerWatcher[T]

	mu      sync.Mutex
	calls   []call             // guarded by mu
	conts   []string           // guarded by mu: the continue token of each LIST response
	current reflector.Watch[T] // guarded by mu: the last watch opened
	gate    chan struct{}
}

func newRecordingLW[T reflector.Object](inner reflector.ListerWatcher[T]) *recordingLW[T] {
	g := make(chan struct{})
	close(g)
	return &recordingLW[T]{inner: inner, gate: g}
}

func (l *recordingLW[T]) record(verb string, opts metav1.ListOptions) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, call{verb: verb, opts: opts})
}

func (l *recordingLW[T]) List(ctx context.Context, opts metav1.ListOptions) (reflector.ListResult[T], error) {
	l.record("list", opts)
	res, err := l.inner.List(ctx, opts)
	l.mu.Lock()
	l.conts = append(l.conts, res.Continue)
	l.mu.Unlock()
	return res, err
}

func (l *recordingLW[T]) Watch(ctx context.Context, opts metav1.ListOptions) (reflector.Watch[T], error) {
	l.mu.Lock()
	gate := l.gate
	l.mu.Unlock()
	select {
	case <-gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	l.record("watch", opts)
	w, err := l.inner.Watch(ctx, opts)
	l.mu.Lock()
	l.current = w
	l.mu.Unlock()
	return w, err
}

// Hold makes later Watch calls wait until the returned func is called.
func (l *recordingLW[T]) Hold() (release func()) {
	g := make(chan struct{})
	l.mu.Lock()
	l.gate = g
	l.mu.Unlock()
	return func() { close(g) }
}

// Cut stops the current watch, as a dropped connection would.
func (l *recordingLW[T]) Cut() {
	l.mu.Lock()
	w := l.current
	l.mu.Unlock()
	if w != nil {
		w.Stop()
	}
}

func (l *recordingLW[T]) Calls() []call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]call(nil), l.calls...)
}

func (l *recordingLW[T]) Continues() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.conts...)
}

// integrationClient returns a REST client for gv on env's API server, not rate limited.
func integrationClient(t *testing.T, env *testenv.Env, gv schema.GroupVersion) *rest.RESTClient {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0
	c, err := listwatch.NewRESTClient(cfg, gv)
	require.NoError(t, err)
	return c
}

// create POSTs obj as JSON (it must carry apiVersion and kind).
func create(ctx context.Context, c rest.Interface, namespace, resource string, obj any) error {
	body, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	req := c.Post().Resource(resource)
	if namespace != "" {
		req = req.Namespace(namespace)
	}
	return req.Body(body).SetHeader("Content-Type", "application/json").Do(ctx).Error()
}

func createNamespace(t *testing.T, ctx context.Context, core rest.Interface, name string) {
	t.Helper()
	ns := corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
	require.NoError(t, create(ctx, core, "", "namespaces", ns))
}

func newConfigMap(namespace, name string, labels map[string]string) corev1.ConfigMap {
	return corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Data:       map[string]string{"n": name},
	}
}

// createConfigMaps creates n ConfigMaps named prefix-0 … with 8 concurrent clients.
func createConfigMaps(ctx context.Context, core rest.Interface, namespace, prefix string, n int, labels map[string]string) error {
	return sampleobjects.InParallel(n, func(i int) error {
		return create(ctx, core, namespace, "configmaps", newConfigMap(namespace, fmt.Sprintf("%s-%d", prefix, i), labels))
	})
}

// directVersions LISTs configmaps in namespace with selector, straight from the server.
func directVersions(ctx context.Context, core rest.Interface, namespace, selector string) (map[string]string, error) {
	var list corev1.ConfigMapList
	body, err := core.Get().Namespace(namespace).Resource("configmaps").Param("labelSelector", selector).Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, o := range list.Items {
		out[key(&o)] = o.ResourceVersion
	}
	return out, nil
}

// eventually polls cond every 100ms until it holds or ctx ends.
func eventually(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting until %s", what)
		case <-tick.C:
		}
	}
}

// converged reports whether store holds exactly what a direct LIST returns.
func converged[T reflector.Object](t *testing.T, ctx context.Context, core rest.Interface, namespace, selector string, store *mapStore[T]) func() bool {
	return func() bool {
		want, err := directVersions(ctx, core, namespace, selector)
		if err != nil {
			t.Logf("direct LIST: %v", err)
			return false
		}
		got := store.Versions()
		if len(got) != len(want) {
			return false
		}
		for k, rv := range want {
			if got[k] != rv {
				return false
			}
		}
		return true
	}
}

// runReflector runs r until the test ends and waits for Run to return.
func runReflector[T reflector.Object](t *testing.T, r *reflector.Reflector[T]) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	// Goroutine owned by the test: exits when the cleanup cancels ctx, and the
	// cleanup waits for it.
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
