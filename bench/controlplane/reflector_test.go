// Package controlplane holds the side-by-side benchmarks that need a real
// kube-apiserver. They are a package of their own so that `make bench` runs them
// after the in-process benchmarks, and the control plane they start (and leave
// running until the process exits) is never on the machine while those run.
package controlplane

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/bench/internal/cpusample"
	"github.com/kubeinternals/informers/bench/internal/heapsample"
	"github.com/kubeinternals/informers/bench/internal/sidebyside"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/reflector"
)

// The reflector benchmarks list (and start watching) the 10,000 small ConfigMaps of
// configMaps10k from a real kube-apiserver, once with our reflector and once with
// client-go's, into the same plain map store. Besides ns/op they report:
//
//	ms/first-replace  time from Run to the store's first Replace (the initial sync)
//	MB-heap-peak      the peak of the heap's objects during the sync, above the level
//	                  before it (garbage not yet swept included)
//	MB-live-after     the live heap after the sync and a forced collection, above the
//	                  level before it: what the store keeps
const reflectorBenchObjects = 10_000

var reflectorBenchNamespace = configMaps10k.namespace

// reflectorBenchConfig starts the control plane and creates the ConfigMaps, once.
func reflectorBenchConfig(b *testing.B) *rest.Config {
	cfg := benchConfig(b)
	configMaps10k.ensure(b, cfg)
	return cfg
}

// syncMetrics accumulates the custom metrics over the timed ops: the averages divide
// by ops. The first op measure sees is sidebyside.Loop's untimed warm-up, and it is
// left out like the timer leaves it out: it is the op that maps memory the process
// has not used before (the first of its side, or the first after the other side's),
// and counting it made each side's first rounds outliers.
type syncMetrics struct {
	// unit names the time-to-sync metric: "ms/first-replace" when empty.
	unit           string
	warmedUp       bool
	ops            int
	firstReplace   time.Duration
	peakMB, liveMB float64
	cpu            cpusample.Total
	// wire, when set, is the side's counting connection (wire_test.go): the bytes it
	// read during each measured op are reported as MB-wire, the bytes the client's
	// decoder read as MB-decoded, and report checks that its watch-lists were gzipped
	// exactly when it asked for gzip.
	wire                    *wireSide
	wireBytes, decodedBytes int64
}

func (m *syncMetrics) report(b *testing.B) {
	n := float64(m.ops)
	unit := m.unit
	if unit == "" {
		unit = "ms/first-replace"
	}
	b.ReportMetric(float64(m.firstReplace.Milliseconds())/n, unit)
	b.ReportMetric(m.peakMB/n, "MB-heap-peak")
	b.ReportMetric(m.liveMB/n, "MB-live-after")
	m.cpu.Report(b)
	if m.wire != nil {
		b.ReportMetric(float64(m.wireBytes)/1e6/n, "MB-wire")
		b.ReportMetric(float64(m.decodedBytes)/1e6/n, "MB-decoded")
		m.wire.checkCompression(b)
	}
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
// the LIST then WATCH, as ours does when asked for reflector.PagedList (both stream
// a watch-list by default).
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

// ourConfigMapLW is our ListerWatcher for the reflector rows' ConfigMaps.
func ourConfigMapLW(b *testing.B, cfg *rest.Config, protobuf bool) *listwatch.RESTListerWatcher[*corev1.ConfigMap] {
	client, err := listwatch.NewRESTClient(cfg, corev1.SchemeGroupVersion)
	if err != nil {
		b.Fatal(err)
	}
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	if err != nil {
		b.Fatal(err)
	}
	lw, err := listwatch.New[*corev1.ConfigMap](client, listwatch.Options{
		Resource: "configmaps", Namespace: reflectorBenchNamespace, Scheme: scheme, Protobuf: protobuf,
	})
	if err != nil {
		b.Fatal(err)
	}
	return lw
}

// ourSync and clientGoSync run one side of a reflector row; a watch-list side counts
// its bytes on the wire (newWireSide) and checks that they came gzipped.
func ourSync(b *testing.B, cfg *rest.Config, protobuf, watchList bool) {
	var m syncMetrics
	if watchList {
		m.wire = newWireSide(b, cfg)
		cfg = m.wire.cfg
	}
	lw := ourConfigMapLW(b, cfg, protobuf)
	sidebyside.Loop(b, func() {
		store := newOurMapStore()
		mode := reflector.PagedList
		if watchList {
			mode = reflector.WatchList
		}
		r, err := reflector.NewReflector[*corev1.ConfigMap](lw, store, reflector.Options[*corev1.ConfigMap]{InitialList: mode})
		if err != nil {
			b.Fatal(err)
		}
		m.measure(b, func(ctx context.Context) { r.Run(ctx) }, store.replaced)
	})
	m.report(b)
}

func clientGoSync(b *testing.B, cfg *rest.Config, protobuf, watchList bool) {
	var m syncMetrics
	if watchList {
		m.wire = newWireSide(b, cfg)
		cfg = m.wire.cfg
	}
	cs, err := kubernetes.NewForConfig(configForMedia(cfg, protobuf))
	if err != nil {
		b.Fatal(err)
	}
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "configmaps", reflectorBenchNamespace, fields.Everything())
	var lwi cache.ListerWatcher = lw
	if !watchList {
		lwi = classicListWatch{lw}
	}
	sidebyside.Loop(b, func() {
		store := newClientGoMapStore()
		r := cache.NewReflector(lwi, &corev1.ConfigMap{}, store, 0)
		m.measure(b, r.RunWithContext, store.replaced)
	})
	m.report(b)
}

// measure quiesces (see quiesce), then runs run until replaced is closed, then stops it, accumulating the time
// to the first Replace and the memory metrics (taken with the timer stopped) unless
// this is the warm-up op.
func (m *syncMetrics) measure(b *testing.B, run func(context.Context), replaced <-chan struct{}) {
	record := m.warmedUp
	m.warmedUp = true
	quiesce(b)
	b.StopTimer()
	heap := heapsample.Start()
	b.StartTimer()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var read0, decoded0 int64
	if m.wire != nil {
		read0, decoded0 = m.wire.bytes()
	}
	start := time.Now()
	if record {
		m.cpu.Start()
	}
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
	took := time.Since(start)
	if record {
		m.cpu.Stop()
	}
	if m.wire != nil && record {
		read, decoded := m.wire.bytes()
		m.wireBytes += read - read0
		m.decodedBytes += decoded - decoded0
	}
	peak, live := heap.Finish(b)
	if record {
		m.ops++
		m.firstReplace += took
		m.peakMB += peak
		m.liveMB += live
	}
	cancel()
	<-done
}

// BenchmarkReflectorSync10kConfigMaps: LIST at RV 0 of 10k ConfigMaps in JSON into a
// map store, then the WATCH starts. (Both reflectors ask for pages of 500; at RV 0 the
// apiserver's watch cache ignores the limit and answers in one response.)
//
// Fair: the same apiserver, objects and store shape; both decode with apimachinery's
// JSON serializer through client-go's REST client; client-go's watch-list is turned
// off for its reflector (classicListWatch) so both take the LIST-then-WATCH path.
// Wall time is noisy (the apiserver and etcd share the 2 cores); the client's CPU and
// heap decide.
func BenchmarkReflectorSync10kConfigMaps(b *testing.B) {
	cfg := reflectorBenchConfig(b)
	sidebyside.Pair(b, func(b *testing.B) { ourSync(b, cfg, false, false) },
		func(b *testing.B) { clientGoSync(b, cfg, false, false) })
}

// BenchmarkReflectorSync10kConfigMapsProtobuf: the same in protobuf.
//
// Fair: as BenchmarkReflectorSync10kConfigMaps, both asking for protobuf. Wall time
// is noisy (the apiserver and etcd share the 2 cores); the client's CPU and heap
// decide.
func BenchmarkReflectorSync10kConfigMapsProtobuf(b *testing.B) {
	cfg := reflectorBenchConfig(b)
	sidebyside.Pair(b, func(b *testing.B) { ourSync(b, cfg, true, false) },
		func(b *testing.B) { clientGoSync(b, cfg, true, false) })
}

// BenchmarkReflectorWatchListSync10kConfigMaps: the initial state as one streaming
// watch (sendInitialEvents), JSON; client-go 1.37's default. It reports MB-wire and
// MB-decoded, as the defaults rows do.
//
// Fair: both reflectors ask for the watch-list stream of the same objects in JSON.
// Both ask for gzip, and since the 1.37 control plane the stream arrives gzipped and
// each side's client CPU includes decompressing it (the row fails if it arrives
// plain). Wall time is noisy (the apiserver and etcd share the 2 cores); the client's CPU and
// heap decide.
func BenchmarkReflectorWatchListSync10kConfigMaps(b *testing.B) {
	cfg := reflectorBenchConfig(b)
	sidebyside.Pair(b, func(b *testing.B) { ourSync(b, cfg, false, true) },
		func(b *testing.B) { clientGoSync(b, cfg, false, true) })
}

// BenchmarkBareListDecode10kConfigMaps is the lower bound of the sync: one LIST at
// RV 0 of the same objects in JSON, decoded, each item extracted, nothing stored.
//
// Fair: ours is our ListerWatcher's List (JSON: decode, then one copy per item out of
// the page; protobuf: each item decoded in its own allocation as the body arrives);
// client-go's is its typed List followed by meta.ExtractListWithAlloc, the same
// per-item extraction its reflector does: the same result, items that share nothing. Wall time is noisy (the apiserver and
// etcd share the 2 cores); the client's CPU and heap decide.
func BenchmarkBareListDecode10kConfigMaps(b *testing.B) {
	cfg := reflectorBenchConfig(b)
	sidebyside.Pair(b, func(b *testing.B) { ourBareList(b, cfg, false) },
		func(b *testing.B) { clientGoBareList(b, cfg, false) })
}

// BenchmarkBareListDecode10kConfigMapsProtobuf: the same in protobuf.
//
// Fair: as BenchmarkBareListDecode10kConfigMaps, both asking for protobuf. Wall time
// is noisy (the apiserver and etcd share the 2 cores); the client's CPU and heap
// decide.
func BenchmarkBareListDecode10kConfigMapsProtobuf(b *testing.B) {
	cfg := reflectorBenchConfig(b)
	sidebyside.Pair(b, func(b *testing.B) { ourBareList(b, cfg, true) },
		func(b *testing.B) { clientGoBareList(b, cfg, true) })
}

var bareListOptions = metav1.ListOptions{ResourceVersion: "0"}

func ourBareList(b *testing.B, cfg *rest.Config, protobuf bool) {
	lw := ourConfigMapLW(b, cfg, protobuf)
	quietLoop(b, func() {
		res, err := lw.List(context.Background(), bareListOptions)
		if err != nil || len(res.Items) != reflectorBenchObjects {
			b.Fatalf("list: %d items, %v", len(res.Items), err)
		}
	})
}

func clientGoBareList(b *testing.B, cfg *rest.Config, protobuf bool) {
	cs, err := kubernetes.NewForConfig(configForMedia(cfg, protobuf))
	if err != nil {
		b.Fatal(err)
	}
	quietLoop(b, func() {
		list, err := cs.CoreV1().ConfigMaps(reflectorBenchNamespace).List(context.Background(), bareListOptions)
		if err != nil {
			b.Fatal(err)
		}
		items, err := meta.ExtractListWithAlloc(list)
		if err != nil || len(items) != reflectorBenchObjects {
			b.Fatalf("list: %d items, %v", len(items), err)
		}
	})
}
