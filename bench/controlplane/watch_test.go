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
// adds to decoding: buffering, the queue, the cache and its index. It is measured the
// way that row is (syncMetrics.measure: the same quiet start, the same heap sampler
// running through the op, the client's CPU up to the bookmark), so the two rows'
// client CPU differ by the informer's work only. (It first ran without the sampler,
// so its client CPU left out a cost the informer rows pay.)
//
// Fair: the same request on both sides; ours reads our RESTListerWatcher's stream,
// client-go's its typed client's Watch; both stop at the same bookmark. Both ask for
// gzip, and since the 1.37 control plane the stream arrives gzipped: each side's
// client CPU includes decompressing it, as the default sync's does (the row fails if
// it arrives plain; MB-wire and MB-decoded are reported as there). Wall time is
// noisy (the apiserver and etcd share the 2 cores); the client's CPU and heap decide.
func BenchmarkBareWatchListDecode10kConfigMaps(b *testing.B) {
	cfg := reflectorBenchConfig(b)
	yes := true
	opts := metav1.ListOptions{
		SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true,
	}
	sidebyside.Pair(b, func(b *testing.B) {
		side := newWireSide(b, cfg)
		lw := ourConfigMapLW(b, side.cfg, true)
		bareDecode(b, side, func(ctx context.Context) []*corev1.ConfigMap {
			w, err := lw.Watch(ctx, opts)
			if err != nil {
				b.Error(err)
				return nil
			}
			defer w.Stop()
			items := make([]*corev1.ConfigMap, 0, 16)
			for ev := range w.ResultChan() {
				if ev.Type == watch.Bookmark && ev.Object.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
					break
				}
				items = append(items, ev.Object)
			}
			return items
		})
	}, func(b *testing.B) {
		side := newWireSide(b, cfg)
		cs, err := kubernetes.NewForConfig(configForMedia(side.cfg, true))
		if err != nil {
			b.Fatal(err)
		}
		cms := cs.CoreV1().ConfigMaps(reflectorBenchNamespace)
		bareDecode(b, side, func(ctx context.Context) []*corev1.ConfigMap {
			w, err := cms.Watch(ctx, opts)
			if err != nil {
				b.Error(err)
				return nil
			}
			defer w.Stop()
			items := make([]*corev1.ConfigMap, 0, 16)
			for ev := range w.ResultChan() {
				cm, ok := ev.Object.(*corev1.ConfigMap)
				if !ok {
					b.Errorf("%s %T", ev.Type, ev.Object)
					return nil
				}
				if ev.Type == watch.Bookmark && cm.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
					break
				}
				items = append(items, cm)
			}
			return items
		})
	})
}

// bareDecode runs one side of BenchmarkBareWatchListDecode10kConfigMaps: each op is
// decode (one watch-list, its objects appended to a slice up to the end bookmark, the
// watch stopped) inside syncMetrics.measure, as the informer rows are measured. The
// slice is kept until measure has taken the heap after the op, so MB-live-after is the
// decoded objects, the size of the cache they would fill. side counts the bytes.
func bareDecode(b *testing.B, side *wireSide, decode func(ctx context.Context) []*corev1.ConfigMap) {
	m := syncMetrics{unit: "ms/synced", wire: side}
	sidebyside.Loop(b, func() {
		synced := make(chan struct{})
		var items []*corev1.ConfigMap
		m.measure(b, func(ctx context.Context) {
			items = decode(ctx)
			close(synced)
			<-ctx.Done()
		}, synced)
		checkCached(b, len(items), reflectorBenchObjects)
	})
	m.report(b)
}
