package controlplane

import (
	"context"
	"reflect"
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
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/bench/internal/sidebyside"
	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/reflector"
)

// The informer benchmarks on a real apiserver: one op starts an informer on a data
// set's namespace, waits until it has synced, checks that its cache holds every
// object, and stops it. They report ms/synced, MB-heap-peak and MB-live-after (see
// syncMetrics).

// BenchmarkDefaultsFactorySync10kConfigMaps: what each library gives a user who asks
// for a ConfigMap informer without tuning anything: our informer.Factory (paged LIST
// then WATCH, DeltaFIFO, protobuf for built-in types) against client-go's
// informers.NewSharedInformerFactory (a streaming watch-list, RealFIFO, protobuf
// through its typed clientset).
//
// Fair: defaults against defaults, the same namespace of 10,000 ConfigMaps, the same
// rest.Config (client-side rate limiting off), no resync, no handlers.
func BenchmarkDefaultsFactorySync10kConfigMaps(b *testing.B) {
	cfg := benchConfig(b)
	configMaps10k.ensure(b, cfg)
	benchmarkDefaults[*corev1.ConfigMap](b, cfg, configMaps10k, corev1.SchemeGroupVersion.WithResource("configmaps"),
		func(f clientgoinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().ConfigMaps().Informer()
		})
}

// BenchmarkDefaultsFactorySync100kPods: as BenchmarkDefaultsFactorySync10kConfigMaps,
// on 100,000 Pods.
//
// Fair: as BenchmarkDefaultsFactorySync10kConfigMaps.
func BenchmarkDefaultsFactorySync100kPods(b *testing.B) {
	cfg := benchConfig(b)
	pods100k.ensure(b, cfg)
	benchmarkDefaults[*corev1.Pod](b, cfg, pods100k, corev1.SchemeGroupVersion.WithResource("pods"),
		func(f clientgoinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().Pods().Informer()
		})
}

func benchmarkDefaults[T indexer.Object](b *testing.B, cfg *rest.Config, data *dataSet, gvr schema.GroupVersionResource,
	clientGoInformer func(clientgoinformers.SharedInformerFactory) cache.SharedIndexInformer) {
	scheme, err := reflector.NewScheme(corev1.AddToScheme)
	if err != nil {
		b.Fatal(err)
	}
	sidebyside.Pair(b, func(b *testing.B) {
		m := syncMetrics{unit: "ms/synced"}
		sidebyside.Loop(b, func() {
			f := informer.NewFactory(cfg, informer.FactoryOptions{Scheme: scheme})
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
			checkCached(b, len(inf.Indexer().ListKeys()), data.n)
		})
		m.report(b)
	}, func(b *testing.B) {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			b.Fatal(err)
		}
		m := syncMetrics{unit: "ms/synced"}
		sidebyside.Loop(b, func() {
			f := clientgoinformers.NewSharedInformerFactoryWithOptions(cs, 0, clientgoinformers.WithNamespace(data.namespace))
			inf := clientGoInformer(f)
			synced := make(chan struct{})
			m.measure(b, func(ctx context.Context) {
				f.Start(ctx.Done())
				if all(f.WaitForCacheSync(ctx.Done())) {
					close(synced)
				}
				<-ctx.Done()
				f.Shutdown()
			}, synced)
			checkCached(b, len(inf.GetStore().ListKeys()), data.n)
		})
		m.report(b)
	})
}

// BenchmarkInformerSync100kPods: a shared informer with the namespace index syncs
// 100,000 Pods, both sides configured alike: paged LIST then WATCH, protobuf,
// RealFIFO. The transform=strip-managed-fields rows set a transform that drops
// metadata.managedFields before objects reach the cache (a common memory saving);
// compare MB-live-after with the transform=none rows.
//
// Fair: the same requests and wire format on both sides; client-go's reflector has
// its watch-list turned off (classicListWatch) so that both LIST; the transforms do
// the same thing (client-go's through meta.Accessor, as its users write it).
func BenchmarkInformerSync100kPods(b *testing.B) {
	cfg := benchConfig(b)
	pods100k.ensure(b, cfg)
	for _, strip := range []bool{false, true} {
		name := "transform=none"
		if strip {
			name = "transform=strip-managed-fields"
		}
		b.Run(name, func(b *testing.B) { benchmarkPodInformer(b, cfg, strip) })
	}
}

func benchmarkPodInformer(b *testing.B, cfg *rest.Config, strip bool) {
	scheme, err := reflector.NewScheme(corev1.AddToScheme)
	if err != nil {
		b.Fatal(err)
	}
	sidebyside.Pair(b, func(b *testing.B) {
		lw, err := reflector.NewListerWatcherForConfig[*corev1.Pod](cfg, corev1.SchemeGroupVersion, reflector.ListWatchOptions{
			Resource: "pods", Namespace: pods100k.namespace, Scheme: scheme, Protobuf: true,
		})
		if err != nil {
			b.Fatal(err)
		}
		m := syncMetrics{unit: "ms/synced"}
		sidebyside.Loop(b, func() {
			inf := informer.NewSharedIndexInformer[*corev1.Pod](lw, informer.Options[*corev1.Pod]{
				Queue:    informer.RealFIFOQueue,
				Indexers: indexer.Indexers[*corev1.Pod]{indexer.NamespaceIndex: indexer.MetaNamespaceIndexFunc[*corev1.Pod]},
			})
			if strip {
				if err := inf.SetTransform(func(p *corev1.Pod) (*corev1.Pod, error) {
					p.ManagedFields = nil
					return p, nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			synced := make(chan struct{})
			m.measure(b, runUntilSynced(inf.Run, inf.HasSynced, synced), synced)
			checkCached(b, len(inf.Indexer().ListKeys()), pods100k.n)
		})
		m.report(b)
	}, func(b *testing.B) {
		cs, err := kubernetes.NewForConfig(configForMedia(cfg, true))
		if err != nil {
			b.Fatal(err)
		}
		pods := cs.CoreV1().Pods(pods100k.namespace)
		lw := &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) },
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return pods.Watch(ctx, o)
			},
		}
		m := syncMetrics{unit: "ms/synced"}
		sidebyside.Loop(b, func() {
			inf := cache.NewSharedIndexInformer(classicListWatch{lw}, &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
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
			checkCached(b, len(inf.GetStore().ListKeys()), pods100k.n)
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

func all(synced map[reflect.Type]bool) bool {
	for _, ok := range synced {
		if !ok {
			return false
		}
	}
	return true
}
