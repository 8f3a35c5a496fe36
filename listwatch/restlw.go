package listwatch

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/reflector"
)

// Options configures New. Only Resource is required.
type Options struct {
	// Resource is the plural, lower-case resource name: "configmaps", "deployments",
	// "foos". Required.
	Resource string
	// Namespace restricts the LIST and WATCH to one namespace; "" means all.
	Namespace string
	// LabelSelector and FieldSelector filter on the server, e.g. "app=web" and
	// "metadata.name=cfg". "" selects everything. They are validated up front.
	LabelSelector string
	FieldSelector string
	// Scheme maps T's Go type to its kind. nil means T is *unstructured.Unstructured,
	// which decodes any resource (including custom resources) from JSON. A T of
	// *metav1.PartialObjectMetadata needs none: it asks for each object's metadata
	// only, of any resource (metadata.go), and Scheme is not used.
	Scheme *runtime.Scheme
	// Protobuf asks the server for protobuf instead of JSON: smaller and faster to
	// decode. Built-in types with a Scheme, and *metav1.PartialObjectMetadata of any
	// resource; custom resources as whole objects are JSON-only.
	Protobuf bool
	// DecodeConcurrency is how many goroutines decode the events of a watch that asks
	// for its initial events (a watch-list, SendInitialEvents): the whole resource
	// arrives in one burst, and decoding it is most of a sync's client CPU. Events are
	// delivered in stream order whatever the number (concurrentdecode.go). 1 decodes
	// on the goroutine that reads the stream, as every other watch does; 0 means
	// one per processor the Go runtime may use (GOMAXPROCS), at most 4, and so 1 on
	// one processor. Negative is an error.
	//
	// client-go 1.37 decodes every watch on one goroutine; 1.38 decodes a
	// watch-list's events concurrently by default (WatchListClientConcurrentDecoding).
	DecodeConcurrency int
	// Logger receives one line per skipped watch event. Nil means slog.Default();
	// to discard, pass slog.New(slog.DiscardHandler).
	Logger *slog.Logger
}

// RESTListerWatcher lists and watches one resource through a rest.Interface. It is
// safe for concurrent use.
//
// client-go: tools/cache/listwatch.go NewFilteredListWatchFromClient
type RESTListerWatcher[T reflector.Object] struct {
	client rest.Interface
	opts   Options
	codec  *codec[T]
	logger *slog.Logger
}

var _ reflector.ListerWatcher[reflector.Object] = (*RESTListerWatcher[reflector.Object])(nil)

// New returns a ListerWatcher for opts.Resource in client's group
// version. client may be any rest.Interface pointing at the right group version
// (NewRESTClient builds one): the ListerWatcher decodes responses itself.
//
// Example: New[*corev1.ConfigMap](coreClient, Options{
// Resource: "configmaps", Scheme: scheme, Protobuf: true}).
func New[T reflector.Object](client rest.Interface, opts Options) (*RESTListerWatcher[T], error) {
	if client == nil {
		return nil, fmt.Errorf("%w: nil REST client", ErrInvalidOptions)
	}
	if opts.Resource == "" {
		return nil, fmt.Errorf("%w: Resource is required (for example \"configmaps\")", ErrInvalidOptions)
	}
	if opts.DecodeConcurrency < 0 {
		return nil, fmt.Errorf("%w: DecodeConcurrency %d is negative", ErrInvalidOptions, opts.DecodeConcurrency)
	}
	if _, err := labels.Parse(opts.LabelSelector); err != nil {
		return nil, fmt.Errorf("%w: LabelSelector: %v", ErrInvalidOptions, err)
	}
	if _, err := fields.ParseSelector(opts.FieldSelector); err != nil {
		return nil, fmt.Errorf("%w: FieldSelector: %v", ErrInvalidOptions, err)
	}
	var c *codec[T]
	var err error
	switch {
	case isMetadata[T]():
		c, err = newMetadataCodec[T](opts.Protobuf)
	case opts.Scheme != nil:
		c, err = newTypedCodec[T](opts.Scheme, client.APIVersion(), opts.Protobuf)
	case opts.Protobuf:
		err = fmt.Errorf("%w: Protobuf needs a Scheme (unstructured objects are JSON only)", ErrInvalidOptions)
	default:
		c, err = newUnstructuredCodec[T]()
	}
	if err != nil {
		return nil, err
	}
	return &RESTListerWatcher[T]{client: client, opts: opts, codec: c, logger: cmp.Or(opts.Logger, slog.Default())}, nil
}

// request builds a GET for the resource with opts encoded as query parameters, the
// configured selectors, and an Accept header naming exactly our media type.
func (lw *RESTListerWatcher[T]) request(opts metav1.ListOptions) *rest.Request {
	opts.LabelSelector = lw.opts.LabelSelector
	opts.FieldSelector = lw.opts.FieldSelector
	req := lw.client.Get().Resource(lw.opts.Resource)
	if lw.opts.Namespace != "" {
		req = req.Namespace(lw.opts.Namespace)
	}
	accept := lw.codec.listAccept
	if opts.Watch {
		accept = lw.codec.watchAccept
	}
	return req.SpecificallyVersionedParams(&opts, metav1.ParameterCodec, metav1.SchemeGroupVersion).
		SetHeader("Accept", accept)
}

// List performs one LIST request and decodes the page.
//
// client-go: tools/cache/listwatch.go ListWatch.ListWithContext
func (lw *RESTListerWatcher[T]) List(ctx context.Context, opts metav1.ListOptions) (reflector.ListResult[T], error) {
	opts.Watch = false
	if lw.codec.fast != nil && lw.codec.fast.streamList {
		// Protobuf lists of generated types are decoded as they arrive
		// (liststream.go). Stream returns the server's Status as the error, as
		// Result.Error does below.
		body, err := lw.request(opts).Stream(ctx)
		if err != nil {
			return reflector.ListResult[T]{}, err
		}
		defer body.Close()
		return lw.codec.decodeListStream(body)
	}
	result := lw.request(opts).Do(ctx)
	// Pitfall: Result.Raw returns a bare "status code 410" error; Result.Error
	// decodes the server's Status, which is what says Expired or TooManyRequests.
	if err := result.Error(); err != nil {
		return reflector.ListResult[T]{}, err
	}
	body, _ := result.Raw()
	return lw.codec.decodeList(body)
}

// Watch opens one WATCH request. The returned stream decodes events in a goroutine
// owned by the stream; a wrong-type or undecodable object is logged with its key and
// skipped, and the watch goes on.
//
// Differences from client-go: client-go's watch decoder turns an undecodable object
// into an Error event, which ends the watch and forces a relist of everything.
//
// client-go: tools/cache/listwatch.go ListWatch.WatchWithContext
func (lw *RESTListerWatcher[T]) Watch(ctx context.Context, opts metav1.ListOptions) (reflector.Watch[T], error) {
	opts.Watch = true
	reqCtx, cancel := context.WithCancel(ctx)
	// Why Throttle(nil): like client-go's Request.Watch, a watch is not charged to
	// the client's QPS limiter; one long request is not what the limiter is for.
	body, err := lw.request(opts).Throttle(nil).Stream(reqCtx)
	if err != nil {
		cancel()
		return nil, err
	}
	return startStreamWatch(body, cancel, lw.codec, lw.logger, lw.decoders(opts)), nil
}

// decoders is how many goroutines decode the watch opts asks for: DecodeConcurrency
// for a watch-list, one for any other watch (its events come one at a time).
//
// Like 1.38's rest/request.go Request.newStreamWatcher, which uses its concurrent
// decoder only when sendInitialEvents=true.
func (lw *RESTListerWatcher[T]) decoders(opts metav1.ListOptions) int {
	if opts.SendInitialEvents == nil || !*opts.SendInitialEvents {
		return 1
	}
	return cmp.Or(lw.opts.DecodeConcurrency, defaultDecoders())
}

// itemsOf extracts a list object's items as T, each in its own allocation, with the
// list's resource version and continue token.
func itemsOf[T reflector.Object](list runtime.Object) (reflector.ListResult[T], error) {
	acc, err := meta.ListAccessor(list)
	if err != nil {
		return reflector.ListResult[T]{}, fmt.Errorf("decoded %T is not a list: %w", list, err)
	}
	res := reflector.ListResult[T]{ResourceVersion: acc.GetResourceVersion(), Continue: acc.GetContinue(), ShardSelector: shardSelectorOf(list)}
	if n := meta.LenList(list); n > 0 {
		res.Items = make([]T, 0, n)
	}
	err = meta.EachListItemWithAlloc(list, func(o runtime.Object) error {
		t, ok := o.(T)
		if !ok {
			var zero T
			return fmt.Errorf("%w: list item is %T, want %T", ErrWrongType, o, zero)
		}
		if p, ok := any(t).(*metav1.PartialObjectMetadata); ok {
			// A JSON list's items carry apiVersion and kind (protobuf's do not): cleared,
			// as the decoder clears them on every other object.
			p.TypeMeta = metav1.TypeMeta{}
		}
		res.Items = append(res.Items, t)
		return nil
	})
	if err != nil {
		return reflector.ListResult[T]{}, err
	}
	return res, nil
}

// shardSelectorOf is the shard selector a decoded list says the server applied
// (metadata.shardInfo.selector), "" when it has none.
func shardSelectorOf(list runtime.Object) string {
	switch l := list.(type) {
	case metav1.ListMetaAccessor:
		if sharded, ok := l.GetListMeta().(metav1.ShardedListInterface); ok {
			if info := sharded.GetShardInfo(); info != nil {
				return info.Selector
			}
		}
	case *unstructured.UnstructuredList:
		// Pitfall: UnstructuredList has no GetShardInfo in apimachinery 0.37; the
		// field is read from the JSON map.
		sel, _, _ := unstructured.NestedString(l.Object, "metadata", "shardInfo", "selector")
		return sel
	}
	return ""
}

// NewForConfig is NewRESTClient followed by New: a
// ListerWatcher for opts.Resource in group version gv of the cluster cfg points at.
//
// Example: NewForConfig[*corev1.ConfigMap](cfg, corev1.SchemeGroupVersion,
// Options{Resource: "configmaps", Scheme: scheme, Protobuf: true}).
func NewForConfig[T reflector.Object](cfg *rest.Config, gv schema.GroupVersion, opts Options) (*RESTListerWatcher[T], error) {
	client, err := NewRESTClient(cfg, gv)
	if err != nil {
		return nil, err
	}
	return New[T](client, opts)
}
