package informer

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/shard"
	"github.com/kubeinternals/informers/trace"
)

// FactoryOptions configures NewFactory.
type FactoryOptions struct {
	// Scheme maps typed objects to their kinds; nil is fine when every informer is
	// for *unstructured.Unstructured or *metav1.PartialObjectMetadata.
	Scheme *runtime.Scheme
	// JSON makes every informer of the factory ask for JSON. By default each informer
	// asks for protobuf when its Go type can decode it — the built-in types of
	// k8s.io/api, whose generated code has Unmarshal — and for JSON otherwise: custom
	// resources (the apiserver serves them only as JSON) and *unstructured.Unstructured.
	// *metav1.PartialObjectMetadata has Unmarshal too, and is served in protobuf for
	// every resource, custom ones included, as client-go's metadata client asks.
	// Protobuf is smaller on the wire and about twice as fast to decode (bench/
	// measures it). client-go's typed clients, and so the informers of its
	// NewSharedInformerFactory, make the same choice (gentype.PrefersProtobuf).
	//
	// Pitfall: a type with protobuf code served by a server that does not speak it
	// (some aggregated APIs) fails with 406 Not Acceptable; set JSON for that factory.
	JSON bool
	// DecodeConcurrency is how many goroutines decode each informer's watch-list
	// (listwatch.Options.DecodeConcurrency); 0 means one per processor, at most 4.
	DecodeConcurrency int
	// ResyncPeriod is every informer's default handler resync period.
	ResyncPeriod time.Duration
	// Queue, InitialList, BacklogWarning, Logger: passed to every informer (see
	// Options). The zero values are client-go 1.37's: RealFIFO and watch-list.
	Queue          QueueKind
	InitialList    reflector.InitialList
	BacklogWarning int
	Logger         *slog.Logger
	// Tracer is passed to every informer the factory builds, and by each informer to
	// its reflector, queue and handlers: one option traces the whole pipeline. Nil:
	// off. See package trace.
	Tracer *trace.Tracer
	// CheckWatchList and OnInconsistency are passed to every informer: the watch-list
	// consistency check, for tests and CI (see Options.CheckWatchList).
	CheckWatchList  bool
	OnInconsistency func(err *reflector.InconsistencyError)
	// MutationDetector is passed to every informer: the cache mutation detector,
	// for tests and CI (see Options.MutationDetector). Each informer keeps its own
	// copies.
	MutationDetector *MutationDetector
	// MetricsProvider is passed to every informer (see Options.MetricsProvider); each
	// creates its metrics with its own name, the Resource's GroupVersionResource
	// resource ("pods"). One name is published by one informer: the first For of a
	// resource keeps it, and a later informer whose metrics would have the same name —
	// the resource as another Go type (PartialObjectMetadata, Unstructured), in another
	// namespace, with other selectors, or a resource of that name in another group —
	// gets no metrics, and For logs it at Error level, naming the informer that
	// publishes the name.
	//
	// client-go: tools/cache/identity.go InformerName.WithResource (a duplicate
	// registration gets no metrics and an error log)
	MetricsProvider MetricsProvider
	// Shard and RequireServerSharding are passed to every informer: each lists and
	// watches only that shard of its resource (see Options.Shard). A replica that
	// owns a shard builds its factory with it; an informer that must see the whole
	// resource needs a factory without one.
	//
	// Pitfall: with shard.Namespace every cluster-scoped object has the namespace
	// "", whose hash falls in exactly one shard: the other shards see none of them.
	Shard                 shard.Shard
	RequireServerSharding bool
}

// Factory hands out one shared informer per Resource and runs them together, so
// that every controller in a process that watches, say, Pods shares one watch and one
// cache.
//
// client-go: informers/factory.go sharedInformerFactory
type Factory struct {
	cfg  *rest.Config
	opts FactoryOptions

	mu sync.Mutex
	// informers by resource and Go type. Guarded by mu.
	informers map[factoryKey]factoryInformer
	// started marks the informers Start has started. Guarded by mu.
	started map[factoryKey]bool
	// metricNames maps each metrics name (Resource.metricsName) given to
	// FactoryOptions.MetricsProvider to the informer that has it, described for the
	// log. Guarded by mu.
	metricNames map[string]string
	// shutdown: Shutdown was called; Start starts nothing more. Guarded by mu.
	shutdown bool
	// cancel stops the informers' contexts. Guarded by mu.
	cancels []context.CancelFunc
	// wg counts running informers.
	wg sync.WaitGroup
}

type factoryKey struct {
	res Resource
	typ reflect.Type
}

// factoryInformer is what the factory needs of a SharedIndexInformer[T] for any T.
type factoryInformer interface {
	Run(ctx context.Context)
	WatchHealthy(stuckAfter time.Duration) error
	Syncer
}

// NewFactory returns a factory that talks to the API server in cfg.
func NewFactory(cfg *rest.Config, opts FactoryOptions) *Factory {
	return &Factory{cfg: cfg, opts: opts, informers: map[factoryKey]factoryInformer{}, started: map[factoryKey]bool{}, metricNames: map[string]string{}}
}

// For returns the shared informer for res, creating it on first use. T is the Go
// type objects decode into: a typed API object registered in the factory's scheme,
// *unstructured.Unstructured for any resource (custom resources included), or
// *metav1.PartialObjectMetadata for the metadata only of any resource — name,
// namespace, labels, annotations, owners, resourceVersion — at a fraction of the
// memory (the apiserver converts each object; see package listwatch). The informer is
// keyed by Resource and T, so a full and a metadata-only informer of one resource are
// two informers with two watches.
//
// A typed T is checked against res through the scheme: For[*corev1.Secret] on
// configmaps, a type of another group/version, or one the scheme does not know returns
// an error wrapping ErrWrongType. For makes no request, so the check knows only the
// scheme's kinds: a resource whose name is no kind's plural in that group/version (an
// irregular custom plural) is accepted.
//
// indexers are added to the informer's cache besides the namespace index every
// Factory informer has (indexer.NamespaceIndex), on first use or on a later For for the
// same Resource and T — the informer is shared, so every caller sees every index. A name
// that is already indexed is an error (the index functions cannot be compared, so a
// second registration of the same name is refused, as client-go's AddIndexers does);
// define a shared index once, where the informer is first requested.
//
// Pitfall: call For for every resource before Start. Start runs only the informers
// that exist when it is called; one created afterwards does not run until Start is
// called again. Until then nothing fills its cache: Factory.WaitForCacheSync returns
// an error wrapping ErrNotStarted that names it, and waiting on the informer itself
// never succeeds (WaitForCacheSync(ctx, inf) blocks until ctx ends). client-go's factory
// skips such an informer in its WaitForCacheSync and returns at once, the cache empty —
// kubernetes/kubernetes#92777 is that hang.
func For[T indexer.Object](f *Factory, res Resource, indexers ...indexer.Indexers[T]) (*SharedIndexInformer[T], error) {
	key := factoryKey{res: res, typ: reflect.TypeFor[T]()}
	f.mu.Lock()
	defer f.mu.Unlock()
	if inf, ok := f.informers[key]; ok {
		shared := inf.(*SharedIndexInformer[T])
		if err := addIndexers(shared, res, indexers); err != nil {
			return nil, err
		}
		return shared, nil
	}
	var scheme *runtime.Scheme
	if !isUnstructured[T]() && !isMetadata[T]() {
		scheme = f.opts.Scheme
		if scheme == nil {
			return nil, fmt.Errorf("informer for %s as %v: typed objects need FactoryOptions.Scheme", res, key.typ)
		}
		obj, err := newObject[T]()
		if err != nil {
			return nil, fmt.Errorf("informer for %s: %w", res, err)
		}
		if err := checkType(scheme, obj, res.GVR); err != nil {
			return nil, fmt.Errorf("informer for %s: %w", res, err)
		}
	}
	logger := f.opts.Logger
	if logger != nil {
		logger = logger.With(res.logAttrs()...)
	}
	lw, err := listwatch.NewForConfig[T](f.cfg, res.GVR.GroupVersion(), listwatch.Options{
		Resource: res.GVR.Resource, Namespace: res.Namespace,
		LabelSelector: res.LabelSelector, FieldSelector: res.FieldSelector,
		Scheme: scheme, Protobuf: !f.opts.JSON && decodesProtobuf[T](), Logger: logger,
		DecodeConcurrency: f.opts.DecodeConcurrency,
	})
	if err != nil {
		return nil, err
	}
	name := res.GVR.Resource
	metricsName := res.metricsName()
	described := fmt.Sprintf("%s as %v", res, key.typ)
	metrics := f.opts.MetricsProvider
	if metrics != nil {
		if first, taken := f.metricNames[metricsName]; taken {
			// Why: two informers writing one series would make every value of it
			// meaningless (the queue length of one, then of the other).
			cmp.Or(f.opts.Logger, slog.Default()).Error("duplicate informer name: this informer's metrics are not published",
				"name", metricsName, "resource", res.String(), "type", key.typ.String(), "publishedBy", first)
			metrics = nil
		}
	}
	inf := NewSharedIndexInformer[T](lw, Options[T]{
		Name:                  name,
		MetricsName:           metricsName,
		ResyncPeriod:          f.opts.ResyncPeriod,
		Indexers:              indexer.Indexers[T]{indexer.NamespaceIndex: indexer.MetaNamespaceIndexFunc[T]},
		Queue:                 f.opts.Queue,
		InitialList:           f.opts.InitialList,
		BacklogWarning:        f.opts.BacklogWarning,
		Logger:                logger,
		Tracer:                f.opts.Tracer,
		Shard:                 f.opts.Shard,
		RequireServerSharding: f.opts.RequireServerSharding,
		CheckWatchList:        f.opts.CheckWatchList,
		OnInconsistency:       f.opts.OnInconsistency,
		MutationDetector:      f.opts.MutationDetector,
		MetricsProvider:       metrics,
	})
	inf.description = res.String()
	if err := addIndexers(inf, res, indexers); err != nil {
		return nil, err
	}
	f.informers[key] = inf
	if metrics != nil {
		f.metricNames[metricsName] = described
	}
	return inf, nil
}

// addIndexers adds For's indexers to inf's cache through the indexer's own AddIndexers,
// which refuses a name that is already there (indexer.ErrIndexConflict).
func addIndexers[T indexer.Object](inf *SharedIndexInformer[T], res Resource, indexers []indexer.Indexers[T]) error {
	for _, idx := range indexers {
		if err := inf.indexer.AddIndexers(idx); err != nil {
			return fmt.Errorf("informer for %s: %w", res, err)
		}
	}
	return nil
}

// newObject returns a new, empty T for the scheme to look at: T must be a pointer to a
// struct, as every API object type is.
func newObject[T indexer.Object]() (runtime.Object, error) {
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer {
		return nil, fmt.Errorf("%w: %v is not a pointer type", ErrWrongType, typ)
	}
	obj, ok := reflect.New(typ.Elem()).Interface().(runtime.Object)
	if !ok {
		return nil, fmt.Errorf("%w: %v is not a runtime.Object", ErrWrongType, typ)
	}
	return obj, nil
}

// Start runs every informer not yet started, each until ctx ends or Shutdown.
//
// client-go: informers/factory.go sharedInformerFactory.Start
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shutdown {
		return
	}
	for key, inf := range f.informers {
		if f.started[key] {
			continue
		}
		f.started[key] = true
		ictx, cancel := context.WithCancel(ctx)
		f.cancels = append(f.cancels, cancel)
		f.wg.Add(1)
		// Owner: the factory. Exits when ctx ends or Shutdown cancels ictx.
		go func() {
			defer f.wg.Done()
			inf.Run(ictx)
		}()
	}
}

// WaitForCacheSync waits for every informer the factory made, as the package function
// WaitForCacheSync does, and names the informer in its error. An informer that Start has
// not started (created after Start, or Start never called) is an error wrapping
// ErrNotStarted, at once: nothing would ever fill its cache.
//
// client-go: informers/factory.go sharedInformerFactory.WaitForCacheSync, which skips
// informers that were not started and returns a map of bools.
func (f *Factory) WaitForCacheSync(ctx context.Context) error {
	return f.WaitForCacheSyncWithOptions(ctx, WaitOptions{})
}

// WaitForCacheSyncWithOptions is WaitForCacheSync with WaitOptions: keep waiting through
// errors that would end the wait, and be told why it is not over yet.
func (f *Factory) WaitForCacheSyncWithOptions(ctx context.Context, opts WaitOptions) error {
	f.mu.Lock()
	var syncers []Syncer
	var notStarted []string
	for key, inf := range f.informers {
		if !f.started[key] {
			notStarted = append(notStarted, inf.syncName())
			continue
		}
		syncers = append(syncers, inf)
	}
	f.mu.Unlock()
	if len(notStarted) > 0 {
		slices.Sort(notStarted)
		return fmt.Errorf("%w: %s: call Start after creating every informer (or again after creating more)", ErrNotStarted, strings.Join(notStarted, ", "))
	}
	return WaitForCacheSyncWithOptions(ctx, opts, syncers...)
}

// Shutdown stops every informer and waits until all their goroutines have exited.
// Start does nothing afterwards.
//
// client-go: informers/factory.go sharedInformerFactory.Shutdown
func (f *Factory) Shutdown() {
	f.mu.Lock()
	f.shutdown = true
	for _, cancel := range f.cancels {
		cancel()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

func isUnstructured[T any]() bool {
	return reflect.TypeFor[T]() == reflect.TypeFor[*unstructured.Unstructured]()
}

// isMetadata reports whether T is *metav1.PartialObjectMetadata: an informer of
// metadata only, for any resource.
func isMetadata[T any]() bool {
	return reflect.TypeFor[T]() == reflect.TypeFor[*metav1.PartialObjectMetadata]()
}

// protobufDecoder is what apimachinery's protobuf serializer needs of an object to
// decode into (runtime/serializer/protobuf's unmarshaler): the generated code of
// k8s.io/api's types has it; custom resource types and Unstructured do not.
type protobufDecoder interface {
	Reset()
	Unmarshal([]byte) error
}

// decodesProtobuf reports whether T can be decoded from protobuf: the Factory's
// default wire format for T.
//
// client-go: gentype/type.go PrefersProtobuf, set by client-gen for built-in types
func decodesProtobuf[T any]() bool {
	_, ok := any(*new(T)).(protobufDecoder)
	return ok
}
