package informer

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/trace"
)

// Resource names what a shared informer watches. Two requests for the same
// Resource (and Go type) share one informer.
type Resource struct {
	GVR           schema.GroupVersionResource
	Namespace     string // "" for all namespaces
	LabelSelector string
	FieldSelector string
}

// FactoryOptions configures NewFactory.
type FactoryOptions struct {
	// Scheme maps typed objects to their kinds; nil is fine when every informer is
	// for *unstructured.Unstructured.
	Scheme *runtime.Scheme
	// Protobuf asks for protobuf for typed (built-in) resources.
	Protobuf bool
	// ResyncPeriod is every informer's default handler resync period.
	ResyncPeriod time.Duration
	// Queue, WatchList, BacklogWarning, Logger: passed to every informer (see Options).
	Queue          QueueKind
	WatchList      bool
	BacklogWarning int
	Logger         *slog.Logger
	// Tracer is passed to every informer the factory builds, and by each informer to
	// its reflector, queue and handlers: one option traces the whole pipeline. Nil:
	// off. See package trace.
	Tracer *trace.Tracer
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
	Syncer
}

// NewFactory returns a factory that talks to the API server in cfg.
func NewFactory(cfg *rest.Config, opts FactoryOptions) *Factory {
	return &Factory{cfg: cfg, opts: opts, informers: map[factoryKey]factoryInformer{}, started: map[factoryKey]bool{}}
}

// For returns the shared informer for res, creating it on first use. T is the Go
// type objects decode into: a typed API object registered in the factory's scheme,
// or *unstructured.Unstructured for any resource (custom resources included).
//
// Pitfall: call For for every resource before Start. Start runs only the informers
// that exist when it is called; one created afterwards does not run until Start is
// called again. Until then nothing fills its cache, and:
//   - Factory.WaitForCacheSync skips it (it waits only for started informers), so it
//     can return nil while this informer's cache is still empty;
//   - waiting on the informer itself never succeeds: WaitForCacheSync(ctx, inf)
//     blocks until ctx ends and returns an error wrapping ErrNotSynced, and
//     inf.Synced() is never closed.
//
// So after creating an informer late, call Start again (it starts only the informers
// not yet started; after Shutdown it starts nothing). client-go's factory behaves the
// same way; kubernetes/kubernetes#92777 is that hang.
func For[T indexer.Object](f *Factory, res Resource) (*SharedIndexInformer[T], error) {
	key := factoryKey{res: res, typ: reflect.TypeFor[T]()}
	f.mu.Lock()
	defer f.mu.Unlock()
	if inf, ok := f.informers[key]; ok {
		return inf.(*SharedIndexInformer[T]), nil
	}
	var scheme *runtime.Scheme
	if !isUnstructured[T]() {
		scheme = f.opts.Scheme
		if scheme == nil {
			return nil, fmt.Errorf("informer for %s as %v: typed objects need FactoryOptions.Scheme", res.GVR, key.typ)
		}
	}
	lw, err := reflector.NewListerWatcherForConfig[T](f.cfg, res.GVR.GroupVersion(), reflector.ListWatchOptions{
		Resource: res.GVR.Resource, Namespace: res.Namespace,
		LabelSelector: res.LabelSelector, FieldSelector: res.FieldSelector,
		Scheme: scheme, Protobuf: f.opts.Protobuf && scheme != nil, Logger: f.opts.Logger,
	})
	if err != nil {
		return nil, err
	}
	inf := NewSharedIndexInformer[T](lw, Options[T]{
		Name:           res.GVR.Resource,
		ResyncPeriod:   f.opts.ResyncPeriod,
		Indexers:       indexer.Indexers[T]{indexer.NamespaceIndex: indexer.MetaNamespaceIndexFunc[T]},
		Queue:          f.opts.Queue,
		WatchList:      f.opts.WatchList,
		BacklogWarning: f.opts.BacklogWarning,
		Logger:         f.opts.Logger,
		Tracer:         f.opts.Tracer,
	})
	f.informers[key] = inf
	return inf, nil
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

// WaitForCacheSync waits for every started informer; see the package function.
func (f *Factory) WaitForCacheSync(ctx context.Context) error {
	f.mu.Lock()
	var syncers []Syncer
	for key, inf := range f.informers {
		if f.started[key] {
			syncers = append(syncers, inf)
		}
	}
	f.mu.Unlock()
	return WaitForCacheSync(ctx, syncers...)
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
