package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/internal/testenv"
	"github.com/kubeinternals/informers/reflector"
)

// The reflector benchmarks list (and start watching) reflectorBenchObjects small
// ConfigMaps from a real kube-apiserver, once with our reflector and once with
// client-go's, into the same plain map store. Besides ns/op they report:
//
//	ms/first-replace  time from Run to the store's first Replace (the initial sync)
//	MB-peak-heap      peak live heap during the sync, above the level before it
//
// The control plane and the objects are created once per benchmark process. It is
// left running until the process exits (its children die with it): no TestMain is
// needed, so this file cannot collide with other benchmark files.
const (
	reflectorBenchObjects   = 10_000
	reflectorBenchNamespace = "bench-reflector"
)

var reflectorEnv struct {
	once sync.Once
	cfg  *rest.Config
	err  error
}

// reflectorBenchConfig starts the control plane and creates the ConfigMaps, once.
func reflectorBenchConfig(b *testing.B) *rest.Config {
	b.Helper()
	reflectorEnv.once.Do(func() {
		if _, err := testenv.BinDir(); err != nil {
			reflectorEnv.err = err
			return
		}
		// A fixed, reused directory: the environment outlives every benchmark, so
		// nothing would remove a temporary one.
		dir := filepath.Join(os.TempDir(), "kubeinternals-bench-reflector")
		_ = os.RemoveAll(dir)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		env, err := testenv.Launch(ctx, testenv.Options{Dir: dir})
		if err != nil {
			reflectorEnv.err = err
			return
		}
		cfg := rest.CopyConfig(env.Config)
		cfg.QPS, cfg.Burst = -1, 0 // neither side should wait on a client-side rate limiter
		reflectorEnv.cfg = cfg
		reflectorEnv.err = createBenchConfigMaps(ctx, cfg)
	})
	if reflectorEnv.err != nil {
		b.Skipf("skipping: %v (build the control plane with %q)", reflectorEnv.err, testenv.BuildCommand)
	}
	return reflectorEnv.cfg
}

func createBenchConfigMaps(ctx context.Context, cfg *rest.Config) error {
	core, err := reflector.NewRESTClient(cfg, corev1.SchemeGroupVersion)
	if err != nil {
		return err
	}
	post := func(resource string, obj any) error {
		body, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		req := core.Post().Resource(resource)
		if resource == "configmaps" {
			req = req.Namespace(reflectorBenchNamespace)
		}
		return req.Body(body).SetHeader("Content-Type", "application/json").Do(ctx).Error()
	}
	if err := post("namespaces", corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: reflectorBenchNamespace}}); err != nil {
		return err
	}
	work := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		// Goroutines owned by this call: workers that exit when work is closed.
		wg.Go(func() {
			var first error
			for i := range work {
				cm := corev1.ConfigMap{
					TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i), Labels: map[string]string{"app": "bench"}},
					Data:       map[string]string{"key": fmt.Sprintf("value-%d", i)},
				}
				if err := post("configmaps", cm); err != nil && first == nil {
					first = err
				}
			}
			errs <- first
		})
	}
	for i := range reflectorBenchObjects {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// heapSampler records the peak of live heap objects while it runs.
type heapSampler struct {
	stop chan struct{}
	done chan struct{}
	peak uint64
	base uint64
}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// startHeapSampler GCs, takes the baseline, and samples every 2ms until Stop.
func startHeapSampler() *heapSampler {
	runtime.GC()
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{}), base: heapBytes()}
	// Goroutine owned by the sampler: exits when Stop closes h.stop.
	go func() {
		defer close(h.done)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			h.peak = max(h.peak, heapBytes())
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

// Stop returns the peak above the baseline, in MB.
func (h *heapSampler) Stop() float64 {
	close(h.stop)
	<-h.done
	h.peak = max(h.peak, heapBytes())
	return float64(h.peak-min(h.base, h.peak)) / (1 << 20)
}

// syncMetrics accumulates the two custom metrics over b.N iterations.
type syncMetrics struct {
	firstReplace time.Duration
	peakMB       float64
}

func (m *syncMetrics) report(b *testing.B) {
	b.ReportMetric(float64(m.firstReplace.Milliseconds())/float64(b.N), "ms/first-replace")
	b.ReportMetric(m.peakMB/float64(b.N), "MB-peak-heap")
}

// ourMapStore is the plain store for our reflector: namespace/name → object.
type ourMapStore struct {
	mu       sync.Mutex
	items    map[string]*corev1.ConfigMap
	replaced chan struct{}
	once     sync.Once
}

func newOurMapStore() *ourMapStore { return &ourMapStore{replaced: make(chan struct{})} }

func (s *ourMapStore) put(o *corev1.ConfigMap) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[o.Namespace+"/"+o.Name] = o
	return nil
}
func (s *ourMapStore) Add(o *corev1.ConfigMap) error    { return s.put(o) }
func (s *ourMapStore) Update(o *corev1.ConfigMap) error { return s.put(o) }
func (s *ourMapStore) Delete(o *corev1.ConfigMap) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.items, o.Namespace+"/"+o.Name)
	return nil
}
func (s *ourMapStore) Replace(items []*corev1.ConfigMap, _ string) error {
	m := make(map[string]*corev1.ConfigMap, len(items))
	for _, o := range items {
		m[o.Namespace+"/"+o.Name] = o
	}
	s.mu.Lock()
	s.items = m
	s.mu.Unlock()
	s.once.Do(func() { close(s.replaced) })
	return nil
}
func (s *ourMapStore) Resync() error { return nil }

// clientGoMapStore is the same store for client-go's reflector (interface{} items).
type clientGoMapStore struct {
	mu       sync.Mutex
	items    map[string]any
	replaced chan struct{}
	once     sync.Once
}

func newClientGoMapStore() *clientGoMapStore { return &clientGoMapStore{replaced: make(chan struct{})} }

func cgKey(o any) string {
	cm := o.(*corev1.ConfigMap)
	return cm.Namespace + "/" + cm.Name
}
func (s *clientGoMapStore) put(o any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[cgKey(o)] = o
	return nil
}
func (s *clientGoMapStore) Add(o any) error    { return s.put(o) }
func (s *clientGoMapStore) Update(o any) error { return s.put(o) }
func (s *clientGoMapStore) Delete(o any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.items, cgKey(o))
	return nil
}
func (s *clientGoMapStore) Replace(items []any, _ string) error {
	m := make(map[string]any, len(items))
	for _, o := range items {
		m[cgKey(o)] = o
	}
	s.mu.Lock()
	s.items = m
	s.mu.Unlock()
	s.once.Do(func() { close(s.replaced) })
	return nil
}
func (s *clientGoMapStore) Resync() error { return nil }

// classicListWatch hides client-go's watch-list support so that its reflector does
// the paged LIST then WATCH, as ours does by default (client-go 1.35+ would
// otherwise stream).
type classicListWatch struct{ *cache.ListWatch }

func (classicListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// configForMedia pins client-go to one media type. Pitfall: left unset, client-go's
// typed clients (and so its generated informers) ask for protobuf for built-in
// types (Request.UseProtobufAsDefault), while a raw REST client asks for JSON.
func configForMedia(cfg *rest.Config, protobuf bool) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.ContentType, c.AcceptContentTypes = "application/json", "application/json"
	if protobuf {
		c.ContentType, c.AcceptContentTypes = "application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf"
	}
	return c
}

func ourSync(b *testing.B, cfg *rest.Config, protobuf, watchList bool) {
	client, err := reflector.NewRESTClient(cfg, corev1.SchemeGroupVersion)
	if err != nil {
		b.Fatal(err)
	}
	scheme, err := reflector.NewScheme(corev1.AddToScheme)
	if err != nil {
		b.Fatal(err)
	}
	lw, err := reflector.NewListerWatcher[*corev1.ConfigMap](client, reflector.ListWatchOptions{
		Resource: "configmaps", Namespace: reflectorBenchNamespace, Scheme: scheme, Protobuf: protobuf,
	})
	if err != nil {
		b.Fatal(err)
	}
	var m syncMetrics
	b.ReportAllocs()
	for b.Loop() {
		store := newOurMapStore()
		r, err := reflector.NewReflector[*corev1.ConfigMap](lw, store, reflector.Options[*corev1.ConfigMap]{WatchList: watchList})
		if err != nil {
			b.Fatal(err)
		}
		m.measure(b, func(ctx context.Context) { r.Run(ctx) }, store.replaced)
	}
	m.report(b)
}

func clientGoSync(b *testing.B, cfg *rest.Config, protobuf, watchList bool) {
	cs, err := kubernetes.NewForConfig(configForMedia(cfg, protobuf))
	if err != nil {
		b.Fatal(err)
	}
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "configmaps", reflectorBenchNamespace, fields.Everything())
	var lwi cache.ListerWatcher = lw
	if !watchList {
		lwi = classicListWatch{lw}
	}
	var m syncMetrics
	b.ReportAllocs()
	for b.Loop() {
		store := newClientGoMapStore()
		r := cache.NewReflector(lwi, &corev1.ConfigMap{}, store, 0)
		m.measure(b, r.RunWithContext, store.replaced)
	}
	m.report(b)
}

// measure runs run until replaced is closed, then stops it, accumulating the time
// to the first Replace and the heap peak.
func (m *syncMetrics) measure(b *testing.B, run func(context.Context), replaced <-chan struct{}) {
	b.StopTimer()
	heap := startHeapSampler()
	b.StartTimer()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	start := time.Now()
	// Goroutine owned by this iteration: the reflector; it exits when cancel is called.
	go func() {
		defer close(done)
		run(ctx)
	}()
	select {
	case <-replaced:
	case <-time.After(2 * time.Minute):
		b.Fatal("no Replace within 2 minutes")
	}
	m.firstReplace += time.Since(start)
	cancel()
	<-done
	b.StopTimer()
	m.peakMB += heap.Stop()
	b.StartTimer()
}

// BenchmarkReflectorSync10kConfigMaps: paged LIST at RV 0 of 10k ConfigMaps in
// JSON into a map store, then the WATCH starts. client-go's watch-list is turned off
// for its reflector (see classicListWatch) so both do the classic path.
func BenchmarkReflectorSync10kConfigMaps(b *testing.B) {
	cfg := reflectorBenchConfig(b)
	b.Run("ours", func(b *testing.B) { ourSync(b, cfg, false, false) })
	b.Run("client-go", func(b *testing.B) { clientGoSync(b, cfg, false, false) })
}

// BenchmarkReflectorSync10kConfigMapsProtobuf: the same in protobuf.
func BenchmarkReflectorSync10kConfigMapsProtobuf(b *testing.B) {
	cfg := reflectorBenchConfig(b)
	b.Run("ours", func(b *testing.B) { ourSync(b, cfg, true, false) })
	b.Run("client-go", func(b *testing.B) { clientGoSync(b, cfg, true, false) })
}

// BenchmarkReflectorWatchListSync10kConfigMaps: the initial state as one streaming
// watch (sendInitialEvents), JSON; client-go 1.36's default.
func BenchmarkReflectorWatchListSync10kConfigMaps(b *testing.B) {
	cfg := reflectorBenchConfig(b)
	b.Run("ours", func(b *testing.B) { ourSync(b, cfg, false, true) })
	b.Run("client-go", func(b *testing.B) { clientGoSync(b, cfg, false, true) })
}

// BenchmarkBareListDecode10kConfigMaps is the lower bound of the sync: one LIST at
// RV 0 of the same objects in JSON, decoded, nothing stored. Ours copies each item
// out of the list (so the page array is not retained); client-go's typed List does not.
func BenchmarkBareListDecode10kConfigMaps(b *testing.B) {
	cfg := reflectorBenchConfig(b)
	b.Run("ours", func(b *testing.B) { ourBareList(b, cfg, false) })
	b.Run("client-go", func(b *testing.B) { clientGoBareList(b, cfg, false) })
}

// BenchmarkBareListDecode10kConfigMapsProtobuf: the same in protobuf.
func BenchmarkBareListDecode10kConfigMapsProtobuf(b *testing.B) {
	cfg := reflectorBenchConfig(b)
	b.Run("ours", func(b *testing.B) { ourBareList(b, cfg, true) })
	b.Run("client-go", func(b *testing.B) { clientGoBareList(b, cfg, true) })
}

var bareListOptions = metav1.ListOptions{ResourceVersion: "0"}

func ourBareList(b *testing.B, cfg *rest.Config, protobuf bool) {
	client, err := reflector.NewRESTClient(cfg, corev1.SchemeGroupVersion)
	if err != nil {
		b.Fatal(err)
	}
	scheme, err := reflector.NewScheme(corev1.AddToScheme)
	if err != nil {
		b.Fatal(err)
	}
	lw, err := reflector.NewListerWatcher[*corev1.ConfigMap](client, reflector.ListWatchOptions{
		Resource: "configmaps", Namespace: reflectorBenchNamespace, Scheme: scheme, Protobuf: protobuf,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := lw.List(context.Background(), bareListOptions)
		if err != nil || len(res.Items) != reflectorBenchObjects {
			b.Fatalf("list: %d items, %v", len(res.Items), err)
		}
	}
}

func clientGoBareList(b *testing.B, cfg *rest.Config, protobuf bool) {
	cs, err := kubernetes.NewForConfig(configForMedia(cfg, protobuf))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		list, err := cs.CoreV1().ConfigMaps(reflectorBenchNamespace).List(context.Background(), bareListOptions)
		if err != nil || len(list.Items) != reflectorBenchObjects {
			b.Fatalf("list: %d items, %v", len(list.Items), err)
		}
	}
}
