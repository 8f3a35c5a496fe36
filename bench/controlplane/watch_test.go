package controlplane

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kubeinternals/informers/bench/internal/cpusample"
	"github.com/kubeinternals/informers/bench/internal/sidebyside"
)

// BenchmarkWatchDecode10kConfigMaps: the throughput of a watch stream. One op opens a
// watch at resourceVersion "0" on the 10,000 ConfigMaps (the apiserver starts it with
// a synthetic ADDED event for every object, from its watch cache), reads and decodes
// all 10,000 events, and stops it. It reports events/s.
//
// Fair: the same watch request on both sides, in JSON or in protobuf; ours decodes
// through our RESTListerWatcher's stream, client-go's through its typed client's
// Watch (the StreamWatcher its reflector reads); both count the same events.
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
				cpusample.Loop(b, func() {
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
				cpusample.Loop(b, func() {
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
