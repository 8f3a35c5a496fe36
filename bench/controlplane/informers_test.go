package controlplane

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clientgoinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/bench/internal/sidebyside"
	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/reflector"
)

// The informer benchmarks on a real apiserver: one op starts an informer on a data
// set's namespace, waits until it has synced, checks that its cache holds every
// object, and stops it. They report ms/synced, MB-heap-peak and MB-live-after (see
// syncMetrics).

// BenchmarkDefaultsFactorySync10kConfigMaps: what each library gives a user who asks
// for a ConfigMap informer without tuning anything: our informer.Factory against
// client-go's informers.NewSharedInformerFactory. Both stream a watch-list into a
// RealFIFO and ask for protobuf (ours for every built-in type, client-go's through
// its typed clientset); the namespace index on both. Both ask for gzip (Go's
// http.Transport does, as rest.Config.DisableCompression is false), and the 1.37
// kube-apiserver gzips a watch-list for a client that asks (its WatchListCompression
// feature): MB-wire is what crossed the connection, MB-decoded what the decoders
// read. BenchmarkDefaultsFactorySync10kConfigMapsGzipOff is the same sync without gzip.
//
// Fair: defaults against defaults — since our zero options are client-go 1.37's, the
// same requests, queue and cache shape — the same namespace of 10,000 ConfigMaps, the
// same rest.Config (client-side rate limiting off), no resync, no handlers. Since the
// 1.37 control plane this row's stream is gzipped and its client CPU includes
// decompressing it, on both sides (against 1.36 it was not: rows measured there are
// not comparable); the row fails if a watch-list arrives plain. Each side reuses one
// connection, counted (wire_test.go), across its ops. Wall time shares 2 cores with
// the apiserver and etcd and stays noisy; the client's own CPU and heap decide the
// row.
func BenchmarkDefaultsFactorySync10kConfigMaps(b *testing.B) {
	cfg := benchConfig(b)
	configMaps10k.ensure(b, cfg)
	benchmarkDefaults[*corev1.ConfigMap](b, cfg, configMaps10k, corev1.SchemeGroupVersion.WithResource("configmaps"),
		func(f clientgoinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().ConfigMaps().Informer()
		})
}

// BenchmarkDefaultsFactorySync10kConfigMapsGzipOff: as
// BenchmarkDefaultsFactorySync10kConfigMaps, with rest.Config.DisableCompression set
// on both sides, so Go's transport sends no Accept-Encoding and the watch-list
// arrives plain. Beside that row it shows what gzip costs the client in CPU and
// saves on the wire (MB-wire), each library alike.
//
// Fair: as BenchmarkDefaultsFactorySync10kConfigMaps, with the one option set on the
// same rest.Config both sides build from; the row fails if a watch-list arrives
// gzipped. Not a default of either library: client-go and ours ask for gzip unless
// told not to.
func BenchmarkDefaultsFactorySync10kConfigMapsGzipOff(b *testing.B) {
	cfg := benchConfig(b)
	configMaps10k.ensure(b, cfg)
	benchmarkDefaults[*corev1.ConfigMap](b, withoutCompression(cfg), configMaps10k, corev1.SchemeGroupVersion.WithResource("configmaps"),
		func(f clientgoinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().ConfigMaps().Informer()
		})
}

// BenchmarkDefaultsFactorySync100kPods: as BenchmarkDefaultsFactorySync10kConfigMaps,
// on 100,000 Pods.
//
// Fair: as BenchmarkDefaultsFactorySync10kConfigMaps (gzipped since the 1.37 control
// plane, on both sides). Wall time is noisy (the apiserver and etcd share the 2
// cores); the client's CPU and heap decide.
func BenchmarkDefaultsFactorySync100kPods(b *testing.B) {
	cfg := benchConfig(b)
	pods100k.ensure(b, cfg)
	benchmarkDefaults[*corev1.Pod](b, cfg, pods100k, corev1.SchemeGroupVersion.WithResource("pods"),
		func(f clientgoinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().Pods().Informer()
		})
}

// BenchmarkDefaultsFactorySync100kPodsGzipOff: as BenchmarkDefaultsFactorySync100kPods,
// with rest.Config.DisableCompression set on both sides: the watch-list of the
// 100,000 Pods arrives plain.
//
// Fair: as BenchmarkDefaultsFactorySync10kConfigMapsGzipOff. Wall time is noisy (the
// apiserver and etcd share the 2 cores, and without gzip the apiserver spends less
// CPU on each op); the client's CPU and heap decide.
func BenchmarkDefaultsFactorySync100kPodsGzipOff(b *testing.B) {
	cfg := benchConfig(b)
	pods100k.ensure(b, cfg)
	benchmarkDefaults[*corev1.Pod](b, withoutCompression(cfg), pods100k, corev1.SchemeGroupVersion.WithResource("pods"),
		func(f clientgoinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().Pods().Informer()
		})
}

func benchmarkDefaults[T indexer.Object](b *testing.B, cfg *rest.Config, data *dataSet, gvr schema.GroupVersionResource,
	clientGoInformer func(clientgoinformers.SharedInformerFactory) cache.SharedIndexInformer) {
	benchmarkTypedFactory[T](b, cfg, data, gvr, informer.FactoryOptions{}, false, clientGoInformer)
}

// benchmarkTypedFactory is benchmarkFactory for a typed informer, our factory with
// opts against client-go's NewSharedInformerFactory; json pins client-go's clients
// to JSON (set FactoryOptions.JSON for ours).
func benchmarkTypedFactory[T indexer.Object](b *testing.B, cfg *rest.Config, data *dataSet, gvr schema.GroupVersionResource,
	opts informer.FactoryOptions, json bool, clientGoInformer func(clientgoinformers.SharedInformerFactory) cache.SharedIndexInformer) {
	benchmarkFactory[T](b, cfg, data, gvr, opts, func(b *testing.B, cfg *rest.Config) func() clientGoFactory {
		if json {
			cfg = configForMedia(cfg, false)
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			b.Fatal(err)
		}
		return func() clientGoFactory {
			f := clientgoinformers.NewSharedInformerFactoryWithOptions(cs, 0, clientgoinformers.WithNamespace(data.namespace))
			inf := clientGoInformer(f)
			return clientGoFactory{start: f.Start, shutdown: f.Shutdown, cache: inf.GetStore(),
				waitForCacheSync: func(stop <-chan struct{}) bool { return all(f.WaitForCacheSync(stop)) }}
		}
	})
}

// clientGoFactory is one client-go factory (typed or metadata) with the informer an
// op syncs: what benchmarkFactory needs of it.
type clientGoFactory struct {
	start            func(stop <-chan struct{})
	waitForCacheSync func(stop <-chan struct{}) bool
	shutdown         func()
	cache            cache.Store
}

// benchmarkFactory: one op starts a factory with one informer for data's namespace,
// waits for the sync, checks the cache, and shuts the factory down. Ours has opts
// (its Scheme set here); client-go's factory is always at its defaults: clientGo is
// called once per side, with the side's config, and returns the constructor of one
// op's factory. Each side builds its clients from its own counting copy of cfg
// (newWireSide), so each reports MB-wire and MB-decoded.
func benchmarkFactory[T indexer.Object](b *testing.B, cfg *rest.Config, data *dataSet, gvr schema.GroupVersionResource,
	opts informer.FactoryOptions, clientGo func(b *testing.B, cfg *rest.Config) func() clientGoFactory) {
	benchmarkFactoryExpecting(b, cfg, data, gvr, opts, clientGo, expected[T]{ours: data.n, clientGo: data.n})
}

// expected is what an op of benchmarkFactoryExpecting checks after the sync: how many
// objects each side's cache holds, and, when set, a check of our informer.
type expected[T indexer.Object] struct {
	ours, clientGo int
	check          func(b *testing.B, inf *informer.SharedIndexInformer[T])
}

// benchmarkFactoryExpecting is benchmarkFactory with the caches' sizes (and a check
// of our informer) given, for rows whose informers hold less than the whole data set.
func benchmarkFactoryExpecting[T indexer.Object](b *testing.B, cfg *rest.Config, data *dataSet, gvr schema.GroupVersionResource,
	opts informer.FactoryOptions, clientGo func(b *testing.B, cfg *rest.Config) func() clientGoFactory, want expected[T]) {
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	if err != nil {
		b.Fatal(err)
	}
	sidebyside.Pair(b, func(b *testing.B) {
		side := newWireSide(b, cfg)
		m := syncMetrics{unit: "ms/synced", wire: side}
		sidebyside.Loop(b, func() {
			opts.Scheme = scheme
			f := informer.NewFactory(side.cfg, opts)
			inf, err := informer.For[T](f, informer.Resource{GVR: gvr, Namespace: data.namespace})
			if err != nil {
				b.Fatal(err)
			}
			synced := make(chan struct{})
			m.measure(b, func(ctx context.Context) {
				f.Start(ctx)
				if err := f.WaitForCacheSync(ctx); err == nil {
					close(synced)
				}
				<-ctx.Done()
				f.Shutdown()
			}, synced)
			checkCached(b, len(inf.Indexer().ListKeys()), want.ours)
			if want.check != nil {
				want.check(b, inf)
			}
		})
		m.report(b)
	}, func(b *testing.B) {
		side := newWireSide(b, cfg)
		newFactory := clientGo(b, side.cfg)
		m := syncMetrics{unit: "ms/synced", wire: side}
		sidebyside.Loop(b, func() {
			f := newFactory()
			synced := make(chan struct{})
			m.measure(b, func(ctx context.Context) {
				f.start(ctx.Done())
				if f.waitForCacheSync(ctx.Done()) {
					close(synced)
				}
				<-ctx.Done()
				f.shutdown()
			}, synced)
			checkCached(b, len(f.cache.ListKeys()), want.clientGo)
		})
		m.report(b)
	})
}

// BenchmarkMetadataFactorySync100kPods: an informer of the Pods' metadata only
// (*metav1.PartialObjectMetadata), each library at its defaults: our informer.Factory's
// For[*metav1.PartialObjectMetadata] against client-go's
// metadatainformer.NewFilteredSharedInformerFactory. Both ask for protobuf and
// keep the namespace index. MB-live-after, next to BenchmarkDefaultsFactorySync100kPods'
// (the same Pods as whole objects), is the cache memory that metadata-only saves.
//
// Fair: defaults against defaults, the same namespace of 100,000 Pods, the same
// rest.Config (client-side rate limiting off), no resync, no handlers; client-go's
// metadata informer streams a watch-list too (ToListWatcherWithWatchListSemantics),
// gzipped on both sides since the 1.37 control plane (the row fails if it arrives
// plain). Wall time is noisy (the apiserver and etcd share the 2 cores, and the apiserver
// converts every Pod); the client's CPU and heap decide.
func BenchmarkMetadataFactorySync100kPods(b *testing.B) {
	cfg := benchConfig(b)
	pods100k.ensure(b, cfg)
	benchmarkMetadataFactory(b, cfg, pods100k, corev1.SchemeGroupVersion.WithResource("pods"))
}

// BenchmarkMetadataFactorySync10kConfigMaps: as BenchmarkMetadataFactorySync100kPods,
// on the 10,000 ConfigMaps; with BenchmarkInformerSync10kConfigMaps, the bytes per
// cached ConfigMap of docs/sizing.md.
//
// Fair: as BenchmarkMetadataFactorySync100kPods. Wall time is noisy (the apiserver
// and etcd share the 2 cores); the client's CPU and heap decide.
func BenchmarkMetadataFactorySync10kConfigMaps(b *testing.B) {
	cfg := benchConfig(b)
	configMaps10k.ensure(b, cfg)
	benchmarkMetadataFactory(b, cfg, configMaps10k, corev1.SchemeGroupVersion.WithResource("configmaps"))
}

// benchmarkMetadataFactory: benchmarkFactory for a metadata-only informer of gvr,
// our For[*metav1.PartialObjectMetadata] against client-go's metadatainformer.
func benchmarkMetadataFactory(b *testing.B, cfg *rest.Config, data *dataSet, gvr schema.GroupVersionResource) {
	benchmarkFactory[*metav1.PartialObjectMetadata](b, cfg, data, gvr, informer.FactoryOptions{}, func(b *testing.B, cfg *rest.Config) func() clientGoFactory {
		mc, err := metadata.NewForConfig(cfg)
		if err != nil {
			b.Fatal(err)
		}
		return func() clientGoFactory {
			f := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, data.namespace, nil)
			inf := f.ForResource(gvr).Informer()
			return clientGoFactory{start: f.Start, shutdown: f.Shutdown, cache: inf.GetStore(),
				waitForCacheSync: func(stop <-chan struct{}) bool { return all(f.WaitForCacheSync(stop)) }}
		}
	})
}

// BenchmarkInformerSync100kPods: a shared informer with the namespace index syncs
// 100,000 Pods, both sides configured alike: LIST then WATCH, protobuf,
// RealFIFO. The transform=strip-managed-fields rows set a transform that drops
// metadata.managedFields before objects reach the cache (a common memory saving);
// compare MB-live-after with the transform=none rows.
//
// Fair: the same requests and wire format on both sides; client-go's reflector has
// its watch-list turned off (classicListWatch) so that both LIST; the transforms do
// the same thing (ours through metav1.Object's SetManagedFields, client-go's through
// meta.Accessor, as its users write it). Wall time is noisy (the apiserver and etcd
// share the 2 cores); the client's CPU and heap decide.
func BenchmarkInformerSync100kPods(b *testing.B) {
	cfg := benchConfig(b)
	pods100k.ensure(b, cfg)
	for _, strip := range []bool{false, true} {
		b.Run(transformName(strip), func(b *testing.B) { benchmarkPodInformer(b, cfg, strip) })
	}
}

// transformName names the sub-benchmark of a sync with or without the transform that
// strips managedFields.
func transformName(strip bool) string {
	if strip {
		return "transform=strip-managed-fields"
	}
	return "transform=none"
}

func benchmarkPodInformer(b *testing.B, cfg *rest.Config, strip bool) {
	cs, err := kubernetes.NewForConfig(configForMedia(cfg, true))
	if err != nil {
		b.Fatal(err)
	}
	pods := cs.CoreV1().Pods(pods100k.namespace)
	benchmarkInformerSync[*corev1.Pod](b, cfg, pods100k, "pods", pods.List, pods.Watch, &corev1.Pod{}, strip)
}

// BenchmarkInformerSync10kConfigMaps: a shared informer with the namespace index syncs
// the 10,000 ConfigMaps of the reflector rows, both sides configured alike (LIST
// then WATCH, protobuf, RealFIFO). Next to BenchmarkBareListDecode10kConfigMapsProtobuf
// it shows what the informer adds to the bare LIST and decode; with and without the
// transform of BenchmarkInformerSync100kPods.
//
// Fair: as BenchmarkInformerSync100kPods. Wall time is noisy (the apiserver and etcd
// share the 2 cores); the client's CPU and heap decide.
func BenchmarkInformerSync10kConfigMaps(b *testing.B) {
	cfg := benchConfig(b)
	configMaps10k.ensure(b, cfg)
	cs, err := kubernetes.NewForConfig(configForMedia(cfg, true))
	if err != nil {
		b.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps(configMaps10k.namespace)
	for _, strip := range []bool{false, true} {
		b.Run(transformName(strip), func(b *testing.B) {
			benchmarkInformerSync[*corev1.ConfigMap](b, cfg, configMaps10k, "configmaps", cms.List, cms.Watch, &corev1.ConfigMap{}, strip)
		})
	}
}

// benchmarkInformerSync: one op syncs a fresh informer on data's namespace — ours
// through our ListerWatcher, client-go's through its typed client's list and watch
// (both protobuf, both LIST then WATCH) — optionally dropping managedFields in a
// transform.
func benchmarkInformerSync[T indexer.Object, L runtime.Object](b *testing.B, cfg *rest.Config, data *dataSet, resource string,
	list func(context.Context, metav1.ListOptions) (L, error), watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error),
	example runtime.Object, strip bool) {
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	if err != nil {
		b.Fatal(err)
	}
	sidebyside.Pair(b, func(b *testing.B) {
		lw, err := listwatch.NewForConfig[T](cfg, corev1.SchemeGroupVersion, listwatch.Options{
			Resource: resource, Namespace: data.namespace, Scheme: scheme, Protobuf: true,
		})
		if err != nil {
			b.Fatal(err)
		}
		m := syncMetrics{unit: "ms/synced"}
		sidebyside.Loop(b, func() {
			inf := informer.NewSharedIndexInformer[T](lw, informer.Options[T]{
				Queue:       informer.RealFIFOQueue,
				InitialList: reflector.PagedList, // client-go's side is classicListWatch
				Indexers:    indexer.Indexers[T]{indexer.NamespaceIndex: indexer.MetaNamespaceIndexFunc[T]},
			})
			if strip {
				if err := inf.SetTransform(func(o T) (T, error) {
					o.SetManagedFields(nil)
					return o, nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			synced := make(chan struct{})
			m.measure(b, runUntilSynced(inf.Run, inf.HasSynced, synced), synced)
			checkCached(b, len(inf.Indexer().ListKeys()), data.n)
		})
		m.report(b)
	}, func(b *testing.B) {
		lw := &cache.ListWatch{
			ListWithContextFunc:  func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return list(ctx, o) },
			WatchFuncWithContext: watchFn,
		}
		m := syncMetrics{unit: "ms/synced"}
		sidebyside.Loop(b, func() {
			inf := cache.NewSharedIndexInformer(classicListWatch{lw}, example, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			if strip {
				if err := inf.SetTransform(func(obj any) (any, error) {
					if a, err := meta.Accessor(obj); err == nil {
						a.SetManagedFields(nil)
					}
					return obj, nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			synced := make(chan struct{})
			m.measure(b, runUntilSynced(inf.RunWithContext, inf.HasSynced, synced), synced)
			checkCached(b, len(inf.GetStore().ListKeys()), data.n)
		})
		m.report(b)
	})
}

// runUntilSynced returns what measure runs for a bare informer: run it, close synced
// once hasSynced reports true (polled every millisecond, on both sides alike), and
// return when run does (ctx ended).
func runUntilSynced(run func(context.Context), hasSynced func() bool, synced chan<- struct{}) func(context.Context) {
	return func(ctx context.Context) {
		done := make(chan struct{})
		// Goroutine owned by this op: the informer; it returns once ctx ends.
		go func() { defer close(done); run(ctx) }()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for !hasSynced() {
			select {
			case <-ctx.Done():
				<-done
				return
			case <-t.C:
			}
		}
		close(synced)
		<-done
	}
}

func checkCached(b *testing.B, got, want int) {
	b.Helper()
	if got != want {
		b.Fatalf("the cache holds %d objects, want %d", got, want)
	}
}

func all[K comparable](synced map[K]bool) bool {
	for _, ok := range synced {
		if !ok {
			return false
		}
	}
	return true
}
