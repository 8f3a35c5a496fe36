package controlplane

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
)

// BenchmarkWatchListDecoding10kConfigMaps: the default sync of
// BenchmarkDefaultsFactorySync10kConfigMaps with our watch-list decoded by 1, 2 or 4
// goroutines (FactoryOptions.DecodeConcurrency; listwatch/concurrentdecode.go), in
// JSON and in protobuf, against client-go 1.37's factory asking for the same format,
// whose watch decoder runs on one goroutine. The rows with decoders=1 and 2 are the
// figures the default (listwatch.DefaultDecodeConcurrency) was chosen from: compare
// each row's client CPU, ms/synced and peak heap with its decoders=1 row, and each
// with client-go's.
//
// Fair: the sync of BenchmarkDefaultsFactorySync10kConfigMaps (a gzipped watch-list,
// RealFIFO, the namespace index, no handlers) with both sides' clients pinned to the
// row's format (for JSON: FactoryOptions.JSON on ours, rest.Config content types on
// client-go's, as configForMedia does). client-go 1.37 has no concurrent decoding
// (1.38 adds it as WatchListClientConcurrentDecoding), so its side is the same in
// every row of a format. Not in the headline: one option of ours swept against
// client-go's one setting; the default sync is BenchmarkDefaultsFactorySync10kConfigMaps'.
func BenchmarkWatchListDecoding10kConfigMaps(b *testing.B) {
	cfg := benchConfig(b)
	configMaps10k.ensure(b, cfg)
	benchmarkWatchListDecoding[*corev1.ConfigMap](b, cfg, configMaps10k, corev1.SchemeGroupVersion.WithResource("configmaps"), []int{1, 2, 4},
		func(f clientgoinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().ConfigMaps().Informer()
		})
}

// BenchmarkWatchListDecoding100kPods: as BenchmarkWatchListDecoding10kConfigMaps, on
// the 100,000 Pods, with 1 or 2 decoders (each op syncs for seconds, and on 2 cores
// the 10k rows show what more decoders do).
//
// Fair: as BenchmarkWatchListDecoding10kConfigMaps. Not in the headline: as
// BenchmarkWatchListDecoding10kConfigMaps.
func BenchmarkWatchListDecoding100kPods(b *testing.B) {
	cfg := benchConfig(b)
	pods100k.ensure(b, cfg)
	benchmarkWatchListDecoding[*corev1.Pod](b, cfg, pods100k, corev1.SchemeGroupVersion.WithResource("pods"), []int{1, 2},
		func(f clientgoinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().Pods().Informer()
		})
}

func benchmarkWatchListDecoding[T indexer.Object](b *testing.B, cfg *rest.Config, data *dataSet, gvr schema.GroupVersionResource, decoders []int,
	clientGoInformer func(clientgoinformers.SharedInformerFactory) cache.SharedIndexInformer) {
	for _, format := range []string{"json", "protobuf"} {
		for _, n := range decoders {
			b.Run(fmt.Sprintf("format=%s/decoders=%d", format, n), func(b *testing.B) {
				json := format == "json"
				benchmarkTypedFactory[T](b, cfg, data, gvr, informer.FactoryOptions{JSON: json, DecodeConcurrency: n}, json, clientGoInformer)
			})
		}
	}
}
