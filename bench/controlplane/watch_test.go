package controlplane

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kubeinternals/informers/bench/internal/sidebyside"
)

// BenchmarkWatchDecode10kConfigMaps: the throughput of a watch stream. One op opens a
// watch at resourceVersion "0" on the 10,000 ConfigMaps (the apiserver starts it with
// a synthetic ADDED event for every object, from its watch cache), reads and decodes
// all 10,000 events, and stops it. It reports events/s.
//
// Fair: the same watch request on both sides, in JSON or in protobuf; ours decodes
// through our RESTListerWatcher's stream, client-go's through its typed client's
// Watch (the StreamWatcher its reflector reads); both count the same events. Wall
// time is noisy (the apiserver and etcd share the 2 cores); the client's CPU and heap
// decide.
func BenchmarkWatchDecode10kConfigMaps(b *testing.B) {
	cfg := reflectorBenchConfig(b)
	for _, protobuf := range []bool{false, true} {
		name := "format=json"
		if protobuf {
			name = "format=protobuf"
		}
		opts := metav1.ListOptions{ResourceVersion: "0"}
		b.Run(name, func(b *testing.B) {
			sidebyside.Pair(b, func(b *testing.B) {
				lw := ourConfigMapLW(b, cfg, protobuf)
				quietLoop(b, func() {
					w, err := lw.Watch(context.Background(), opts)
					if err != nil {
						b.Fatal(err)
					}
					n := 0
					for ev := range w.ResultChan() {
						if ev.Type != watch.Added {
							b.Fatalf("event %d: %s", n, ev.Type)
						}
						if n++; n == reflectorBenchObjects {
							break
						}
					}
					w.Stop()
				})
				b.ReportMetric(float64(reflectorBenchObjects)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			}, func(b *testing.B) {
				cs, err := kubernetes.NewForConfig(configForMedia(cfg, protobuf))
				if err != nil {
					b.Fatal(err)
				}
				cms := cs.CoreV1().ConfigMaps(reflectorBenchNamespace)
				quietLoop(b, func() {
					w, err := cms.Watch(context.Background(), opts)
					if err != nil {
						b.Fatal(err)
					}
					n := 0
					for ev := range w.ResultChan() {
						if _, ok := ev.Object.(*corev1.ConfigMap); !ok || ev.Type != watch.Added {
							b.Fatalf("event %d: %s %T", n, ev.Type, ev.Object)
						}
						if n++; n == reflectorBenchObjects {
							break
						}
					}
					w.Stop()
				})
				b.ReportMetric(float64(reflectorBenchObjects)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			})
		})
	}
}

// BenchmarkBareWatchListDecode10kConfigMaps is the lower bound of the default sync: one
// watch-list of the 10,000 ConfigMaps (sendInitialEvents=true, protobuf, as the
// Factory asks for built-in types), every event decoded and its object appended to
// a slice, up to the bookmark that ends the initial events; nothing else. Beside
// BenchmarkDefaultsFactorySync10kConfigMaps it prices everything a default informer
// adds to decoding: buffering, the queue, the cache and its index.
//
// Fair: the same request on both sides; ours reads our RESTListerWatcher's stream,
// client-go's its typed client's Watch; both stop at the same bookmark. Wall time is
// noisy (the apiserver and etcd share the 2 cores); the client's CPU and heap decide.
func BenchmarkBareWatchListDecode10kConfigMaps(b *testing.B) {
	cfg := reflectorBenchConfig(b)
	yes := true
	opts := metav1.ListOptions{
		SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true,
	}
	sidebyside.Pair(b, func(b *testing.B) {
		lw := ourConfigMapLW(b, cfg, true)
		quietLoop(b, func() {
			w, err := lw.Watch(context.Background(), opts)
			if err != nil {
				b.Fatal(err)
			}
			items := make([]*corev1.ConfigMap, 0, 16)
			for ev := range w.ResultChan() {
				if ev.Type == watch.Bookmark && ev.Object.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
					break
				}
				items = append(items, ev.Object)
			}
			w.Stop()
			checkCached(b, len(items), reflectorBenchObjects)
		})
	}, func(b *testing.B) {
		cs, err := kubernetes.NewForConfig(configForMedia(cfg, true))
		if err != nil {
			b.Fatal(err)
		}
		cms := cs.CoreV1().ConfigMaps(reflectorBenchNamespace)
		quietLoop(b, func() {
			w, err := cms.Watch(context.Background(), opts)
			if err != nil {
				b.Fatal(err)
			}
			items := make([]*corev1.ConfigMap, 0, 16)
			for ev := range w.ResultChan() {
				cm, ok := ev.Object.(*corev1.ConfigMap)
				if !ok {
					b.Fatalf("%s %T", ev.Type, ev.Object)
				}
				if ev.Type == watch.Bookmark && cm.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
					break
				}
				items = append(items, cm)
			}
			w.Stop()
			checkCached(b, len(items), reflectorBenchObjects)
		})
	})
}
