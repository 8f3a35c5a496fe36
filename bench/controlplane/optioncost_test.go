package controlplane

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	clientgoinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/consistencydetector"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/trace"
)

// BenchmarkFactoryOptionCost10kConfigMaps: what each of our FactoryOptions for
// debugging and observing an informer costs a sync. Every row is the sync of
// BenchmarkDefaultsFactorySync10kConfigMaps — a factory's ConfigMap informer syncs the
// 10,000 ConfigMaps of one namespace from a gzipped watch-list — with one option on:
//
//   - option=none: no option, the baseline every other row reads against.
//   - option=mutation-detector: ours has FactoryOptions.MutationDetector at its zero
//     values, client-go's (compare every second, watch a copy for 2 minutes), what a CI
//     run turns on; OnMutation fails the benchmark, since nothing here writes to a
//     cached object. The sync deep-copies each of the 10,000 objects, and the copies
//     stay (MB-live-after). The periodic comparison is outside the row: the first runs
//     a second after Start, after the sync (100–200 ms here). client-go's detector
//     cannot be turned on for one row: it is on only if KUBE_CACHE_MUTATION_DETECTOR is
//     true when the process starts (read by its package's init), which would turn it
//     on in every row, so its side runs at its defaults, detector off.
//   - option=watchlist-check: ours has FactoryOptions.CheckWatchList, OnInconsistency
//     failing the benchmark. client-go's check is turned on for its side only, through
//     consistencydetector.SetDataConsistencyDetectionForWatchListEnabledForTest (the
//     variable KUBE_WATCHLIST_INCONSISTENCY_DETECTOR sets at init, read at the end of
//     each watch-list), and restored when the side ends. Both LIST once more, unpaged,
//     at the end bookmark's resourceVersion (resourceVersionMatch=Exact) before the
//     cache is filled, so that LIST is in ms/synced, client CPU and MB-wire on both
//     sides. client-go's consistencydetector calls it a LIST from etcd; the 1.37 kube-apiserver answers
//     it from its watch cache's snapshot (ListFromCacheSnapshot, on by default: its
//     apiserver_storage_list_total counts it under storage="watchcache"). Ours
//     compares UID and resourceVersion; client-go sorts both lists by UID, compares
//     the whole objects (reflect.DeepEqual) and panics on a difference.
//   - option=tracing: ours has FactoryOptions.Tracer with one sink that counts the
//     events and keeps the most recent 10,000 in a trace.Recorder (Max), one recorder
//     for every op of the row, as a process has one: a sync emits 30,007 events (a
//     watch event, an applied write and a fan-out per object; -v logs the count), so
//     it is full after the first, untimed op, and each timed op pays for building,
//     recording and dropping its events and keeps none of them. client-go has no
//     event trace (its reflector's k8s.io/utils/trace logs only a watch-list slower
//     than 10 s, in every row): its side runs at its defaults.
//   - option=metrics: an in-memory provider on both sides, each metric one atomic
//     (as in BenchmarkWorkerPool: what a Prometheus metric costs without its
//     registry; not the library's test recorder, which keeps every value). Ours is
//     FactoryOptions.MetricsProvider: the informer records its 3 metrics and its
//     reflector its 12 (the 4 per handler need a handler; there is none). client-go
//     1.37's informer provider is process-wide, set once (SetInformerMetricsProvider),
//     and records only for an informer whose factory has an InformerName: this side
//     gives each op's factory a fresh one (WithInformerName), released after Shutdown,
//     so no other row's informer records. It records 3 metrics (queued items,
//     processing latency, the store's resourceVersion), each checking Reserved as
//     component-base's provider does. client-go's reflector provider
//     (SetReflectorMetricsProvider) is not set: v0.37.2's reflector records nothing
//     through it.
//
// client-go: tools/cache/mutation_detector.go NewCacheMutationDetector,
// tools/cache/reflector_data_consistency_detector.go checkWatchListDataConsistencyIfRequested,
// util/consistencydetector/data_consistency_detector.go SetDataConsistencyDetectionForWatchListEnabledForTest,
// tools/cache/informer_metrics.go SetInformerMetricsProvider,
// informers/factory.go WithInformerName, tools/cache/identity.go NewInformerName
//
// Fair: option=none is BenchmarkDefaultsFactorySync10kConfigMaps, defaults against
// defaults. Every other row turns one option on for ours, and the same option for
// client-go where client-go 1.37 can turn it on for one row inside one process (the
// watch-list check, informer metrics); where it cannot (the mutation detector,
// tracing) its side is option=none's again. The same namespace, rest.Config and
// counting connection per side as the defaults rows; the row fails if the stream
// arrives plain, if a check fires, or if a metrics provider records nothing.
//
// Not in the headline: each row measures what one option costs each library against
// its own option=none, not one library against the other. Where client-go cannot
// turn the option on, its side does less than ours; with metrics ours records 15
// metrics to client-go's 3; the two watch-list checks compare different things.
func BenchmarkFactoryOptionCost10kConfigMaps(b *testing.B) {
	cfg := benchConfig(b)
	configMaps10k.ensure(b, cfg)
	for _, option := range []string{"none", "mutation-detector", "watchlist-check", "tracing", "metrics"} {
		b.Run("option="+option, func(b *testing.B) {
			row := newOptionCostRow(b, option)
			benchmarkFactory[*corev1.ConfigMap](b, cfg, configMaps10k, corev1.SchemeGroupVersion.WithResource("configmaps"),
				row.ours, row.clientGo.factory)
			if row.check != nil {
				row.check(b)
			}
		})
	}
}

// optionCostRow is one row of BenchmarkFactoryOptionCost10kConfigMaps.
type optionCostRow struct {
	// ours is our factory's options, the one option set.
	ours     informer.FactoryOptions
	clientGo clientGoOption
	// check, if set, runs after both sides: it fails the row if the option did not
	// do its work.
	check func(b *testing.B)
}

// clientGoOption turns one option on for client-go's side of a row.
type clientGoOption struct {
	// side, if set, runs once per side before its ops; b is the side's.
	side func(b *testing.B)
	// op, if set, returns an extra option for one op's factory and what to do after
	// the factory's Shutdown.
	op func(b *testing.B) (clientgoinformers.SharedInformerOption, func())
}

func newOptionCostRow(b *testing.B, option string) optionCostRow {
	var row optionCostRow
	switch option {
	case "none":
	case "mutation-detector":
		row.ours.MutationDetector = &informer.MutationDetector{OnMutation: func(err *informer.MutationError) {
			b.Errorf("the mutation detector fired, yet nothing here writes to a cached object: %v", err)
		}}
	case "watchlist-check":
		row.ours.CheckWatchList = true
		row.ours.OnInconsistency = func(err *reflector.InconsistencyError) {
			b.Errorf("the watch-list check found a difference: %v", err)
		}
		row.clientGo.side = func(b *testing.B) {
			b.Cleanup(consistencydetector.SetDataConsistencyDetectionForWatchListEnabledForTest(true))
		}
	case "tracing":
		rec := &trace.Recorder{Max: 10_000}
		var events, syncs atomic.Int64
		row.ours.Tracer = trace.New(func(e trace.Event) {
			events.Add(1)
			if e.Kind == trace.Listed {
				syncs.Add(1)
			}
			rec.Record(e)
		})
		row.check = func(b *testing.B) {
			if syncs.Load() == 0 {
				b.Fatal("the tracer saw no sync")
			}
			b.Logf("tracing: %d events a sync (%d syncs, warm-ups included)", events.Load()/syncs.Load(), syncs.Load())
		}
	case "metrics":
		ours := &oursOptionMetrics{}
		row.ours.MetricsProvider = ours
		// Set once for the process (first call wins); it records only for informers
		// given an InformerName, which only this row gives.
		cache.SetInformerMetricsProvider(clientGoRowMetrics)
		row.clientGo.op = func(b *testing.B) (clientgoinformers.SharedInformerOption, func()) {
			name, err := cache.NewInformerName("bench-option-cost")
			if err != nil {
				b.Fatal(err)
			}
			return clientgoinformers.WithInformerName(name), name.Release
		}
		row.check = func(b *testing.B) {
			if !ours.storeRV.recorded() {
				b.Fatal("our informers recorded no store resourceVersion")
			}
			if !clientGoRowMetrics.storeRV.recorded() {
				b.Fatal("client-go's informers recorded no store resourceVersion: was another informer metrics provider set first?")
			}
		}
	default:
		b.Fatalf("unknown option %q", option)
	}
	return row
}

// factory is client-go's side for benchmarkFactory: the factory benchmarkDefaults
// builds (NewSharedInformerFactoryWithOptions for the namespace, its ConfigMap
// informer), with the option's side and op hooks.
func (o clientGoOption) factory(b *testing.B, cfg *rest.Config) func() clientGoFactory {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if o.side != nil {
		o.side(b)
	}
	return func() clientGoFactory {
		opts := []clientgoinformers.SharedInformerOption{clientgoinformers.WithNamespace(configMaps10k.namespace)}
		var after func()
		if o.op != nil {
			opt, a := o.op(b)
			opts, after = append(opts, opt), a
		}
		f := clientgoinformers.NewSharedInformerFactoryWithOptions(cs, 0, opts...)
		inf := f.Core().V1().ConfigMaps().Informer()
		shutdown := f.Shutdown
		if after != nil {
			shutdown = func() { f.Shutdown(); after() }
		}
		return clientGoFactory{start: f.Start, shutdown: shutdown, cache: inf.GetStore(),
			waitForCacheSync: func(stop <-chan struct{}) bool { return all(f.WaitForCacheSync(stop)) }}
	}
}

// optionMetric is one in-memory metric, a gauge, counter or histogram in one atomic,
// as BenchmarkWorkerPool's.
type optionMetric struct{ v atomic.Uint64 }

func (m *optionMetric) Inc()              { m.v.Add(1) }
func (m *optionMetric) Set(v float64)     { m.v.Store(math.Float64bits(v)) }
func (m *optionMetric) Observe(v float64) { m.v.Add(uint64(v * 1e9)) }

// optionLabeledMetric is a counter per label value, looked up on every Inc as a
// Prometheus CounterVec's WithLabelValues does.
type optionLabeledMetric struct{ byLabel sync.Map } // label → *optionMetric

func (m *optionLabeledMetric) Inc(label string) {
	c, ok := m.byLabel.Load(label)
	if !ok {
		c, _ = m.byLabel.LoadOrStore(label, new(optionMetric))
	}
	c.(*optionMetric).Inc()
}

// optionMetrics keeps the store resourceVersion gauges a provider made, for the
// row's check that the informers recorded at all.
type optionMetrics struct {
	mu     sync.Mutex
	gauges []*optionMetric // guarded by mu
}

func (s *optionMetrics) add() *optionMetric {
	m := new(optionMetric)
	s.mu.Lock()
	s.gauges = append(s.gauges, m)
	s.mu.Unlock()
	return m
}

func (s *optionMetrics) recorded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.gauges {
		if m.v.Load() != 0 {
			return true
		}
	}
	return false
}

// oursOptionMetrics is the row's informer.MetricsProvider.
type oursOptionMetrics struct{ storeRV optionMetrics }

func (*oursOptionMetrics) NewListsMetric(string) reflector.CounterMetric { return new(optionMetric) }
func (*oursOptionMetrics) NewListDurationMetric(string) reflector.SummaryMetric {
	return new(optionMetric)
}
func (*oursOptionMetrics) NewItemsInListMetric(string) reflector.SummaryMetric {
	return new(optionMetric)
}
func (*oursOptionMetrics) NewWatchesMetric(string) reflector.CounterMetric { return new(optionMetric) }
func (*oursOptionMetrics) NewShortWatchesMetric(string) reflector.CounterMetric {
	return new(optionMetric)
}
func (*oursOptionMetrics) NewWatchDurationMetric(string) reflector.SummaryMetric {
	return new(optionMetric)
}
func (*oursOptionMetrics) NewItemsInWatchMetric(string) reflector.SummaryMetric {
	return new(optionMetric)
}
func (*oursOptionMetrics) NewLastResourceVersionMetric(string) reflector.GaugeMetric {
	return new(optionMetric)
}
func (*oursOptionMetrics) NewRelistsMetric(string) reflector.LabeledCounterMetric {
	return new(optionLabeledMetric)
}
func (*oursOptionMetrics) NewWatchEventsMetric(string) reflector.LabeledCounterMetric {
	return new(optionLabeledMetric)
}
func (*oursOptionMetrics) NewLastEventTimeMetric(string) reflector.GaugeMetric {
	return new(optionMetric)
}
func (*oursOptionMetrics) NewWatchOpenMetric(string) reflector.GaugeMetric { return new(optionMetric) }
func (*oursOptionMetrics) NewQueuedItemsMetric(string) informer.GaugeMetric {
	return new(optionMetric)
}
func (*oursOptionMetrics) NewProcessingLatencyMetric(string) informer.HistogramMetric {
	return new(optionMetric)
}
func (p *oursOptionMetrics) NewStoreResourceVersionMetric(string) informer.GaugeMetric {
	return p.storeRV.add()
}
func (*oursOptionMetrics) NewShardDroppedMetric(string) informer.CounterMetric {
	return new(optionMetric)
}
func (*oursOptionMetrics) NewShardClientFilteringMetric(string) informer.GaugeMetric {
	return new(optionMetric)
}
func (*oursOptionMetrics) NewHandlerBacklogMetric(string, string) informer.GaugeMetric {
	return new(optionMetric)
}
func (*oursOptionMetrics) NewHandlerHighWaterMetric(string, string) informer.GaugeMetric {
	return new(optionMetric)
}
func (*oursOptionMetrics) NewHandlerDurationMetric(string, string) informer.HistogramMetric {
	return new(optionMetric)
}
func (*oursOptionMetrics) NewHandlerPanicsMetric(string, string) informer.CounterMetric {
	return new(optionMetric)
}
func (*oursOptionMetrics) DeleteHandlerMetrics(string, string) {}

// clientGoRowMetrics is the client-go informer metrics provider of the process: it
// can be set only once, so every run of the row shares it.
var clientGoRowMetrics = &clientGoOptionMetrics{}

// clientGoOptionMetrics is the row's cache.InformerMetricsProvider.
type clientGoOptionMetrics struct{ storeRV optionMetrics }

// reservedOptionMetric records only while its informer's name is reserved, as
// component-base's provider does (client-go asks providers to check): k8s.io/component-base
// metrics/prometheus/clientgo/fifo/metrics.go reservedGaugeMetric.
type reservedOptionMetric struct {
	id cache.InformerNameAndResource
	m  *optionMetric
}

func (r *reservedOptionMetric) Set(v float64) {
	if r.id.Reserved() {
		r.m.Set(v)
	}
}

func (r *reservedOptionMetric) Observe(v float64) {
	if r.id.Reserved() {
		r.m.Observe(v)
	}
}

func (*clientGoOptionMetrics) NewQueuedItemMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	return &reservedOptionMetric{id, new(optionMetric)}
}
func (*clientGoOptionMetrics) NewProcessingLatencyMetric(id cache.InformerNameAndResource) cache.HistogramMetric {
	return &reservedOptionMetric{id, new(optionMetric)}
}
func (p *clientGoOptionMetrics) NewStoreResourceVersionMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	return &reservedOptionMetric{id, p.storeRV.add()}
}
