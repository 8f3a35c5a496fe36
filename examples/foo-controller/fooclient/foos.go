package fooclient

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
)

// Foos is the set of verbs on the foos of one namespace (or of all namespaces, for List
// and Watch). It is a small value; make one per call site with Client.Foos.
type Foos struct {
	client    *Client
	namespace string
}

// request starts a request on this namespace's foos. An empty namespace leaves the
// namespace segment out of the URL (the cluster-wide collection).
func (f Foos) request(verb func() *rest.Request) *rest.Request {
	return verb().NamespaceIfScoped(f.namespace, f.namespace != "").Resource(resource)
}

// Get reads one Foo.
//
// client-go: gentype/type.go Client.Get
func (f Foos) Get(ctx context.Context, name string, opts metav1.GetOptions) (*v1alpha1.Foo, error) {
	if err := f.checkName(name); err != nil {
		return nil, err
	}
	out := &v1alpha1.Foo{}
	err := f.request(f.client.rest.Get).Name(name).
		VersionedParams(&opts, f.client.params).Do(ctx).Into(out)
	return out, err
}

// List reads every Foo matching opts (label and field selectors, paging via Limit and
// Continue, ResourceVersion semantics as for any LIST).
//
// client-go: gentype/type.go alsoLister.List (the unpaged path)
func (f Foos) List(ctx context.Context, opts metav1.ListOptions) (*v1alpha1.FooList, error) {
	out := &v1alpha1.FooList{}
	err := f.request(f.client.rest.Get).
		VersionedParams(&opts, f.client.params).
		Timeout(timeoutOf(opts)).Do(ctx).Into(out)
	return out, err
}

// Watch opens a watch; the stream ends when ctx ends, when opts.TimeoutSeconds passes,
// or when the server closes it. Read ResultChan until it is closed, then call Stop.
//
// Pitfall: a watch from a resourceVersion the server has compacted away gets an
// ERROR event with a 410 Gone Status, not an error from Watch itself; the reflector
// turns that into a relist.
//
// client-go: gentype/type.go Client.Watch
func (f Foos) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return f.request(f.client.rest.Get).
		VersionedParams(&opts, f.client.params).
		Timeout(timeoutOf(opts)).Watch(ctx)
}

// Create stores a new Foo and returns it as stored (with uid, resourceVersion,
// creationTimestamp). Status in the body is ignored: the CRD has a status subresource.
//
// client-go: gentype/type.go Client.Create
func (f Foos) Create(ctx context.Context, foo *v1alpha1.Foo, opts metav1.CreateOptions) (*v1alpha1.Foo, error) {
	if err := f.checkObject(foo, false); err != nil {
		return nil, err
	}
	out := &v1alpha1.Foo{}
	err := f.request(f.client.rest.Post).
		VersionedParams(&opts, f.client.params).Body(foo).Do(ctx).Into(out)
	return out, err
}

// Update replaces a Foo's spec and metadata. foo.ResourceVersion must be the one last
// read: if someone wrote in between, the server answers 409 Conflict
// (apierrors.IsConflict) and nothing changes. Status changes in foo are ignored.
//
// client-go: gentype/type.go Client.Update
func (f Foos) Update(ctx context.Context, foo *v1alpha1.Foo, opts metav1.UpdateOptions) (*v1alpha1.Foo, error) {
	return f.put(ctx, foo, opts, "")
}

// UpdateStatus replaces a Foo's status through the /status subresource; spec and
// metadata changes in foo (other than resourceVersion) are ignored by the server.
//
// Why a separate call: with the status subresource, the main resource ignores status
// and /status ignores spec, so a controller writing status cannot clobber a user's
// concurrent spec edit, and RBAC can grant the two separately (foos/status update).
//
// client-go: gentype/type.go Client.UpdateStatus
func (f Foos) UpdateStatus(ctx context.Context, foo *v1alpha1.Foo, opts metav1.UpdateOptions) (*v1alpha1.Foo, error) {
	return f.put(ctx, foo, opts, "status")
}

func (f Foos) put(ctx context.Context, foo *v1alpha1.Foo, opts metav1.UpdateOptions, subresource string) (*v1alpha1.Foo, error) {
	if err := f.checkObject(foo, true); err != nil {
		return nil, err
	}
	req := f.request(f.client.rest.Put).Name(foo.Name)
	if subresource != "" {
		req = req.SubResource(subresource)
	}
	out := &v1alpha1.Foo{}
	err := req.VersionedParams(&opts, f.client.params).Body(foo).Do(ctx).Into(out)
	return out, err
}

// Delete deletes one Foo. With the default propagation (background) the garbage
// collector then deletes the Deployments whose controller owner reference is this Foo.
//
// client-go: gentype/type.go Client.Delete
func (f Foos) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	if err := f.checkName(name); err != nil {
		return err
	}
	return f.request(f.client.rest.Delete).Name(name).Body(&opts).Do(ctx).Error()
}

// checkName refuses a single-object call without a namespace or a name.
func (f Foos) checkName(name string) error {
	if f.namespace == "" {
		return fmt.Errorf("%w: Foo is namespaced; use Client.Foos(namespace) with a namespace", ErrInvalidArgument)
	}
	if name == "" {
		return fmt.Errorf("%w: empty Foo name", ErrInvalidArgument)
	}
	return nil
}

// checkObject refuses a nil Foo, a missing name (unless generateName will supply one on
// create), and a Foo whose namespace is set but differs from the client's.
func (f Foos) checkObject(foo *v1alpha1.Foo, needName bool) error {
	if foo == nil {
		return fmt.Errorf("%w: nil Foo", ErrInvalidArgument)
	}
	name := foo.Name
	if !needName && name == "" && foo.GenerateName != "" {
		name = foo.GenerateName
	}
	if err := f.checkName(name); err != nil {
		return err
	}
	if foo.Namespace != "" && foo.Namespace != f.namespace {
		return fmt.Errorf("%w: Foo %s/%s sent to namespace %q", ErrInvalidArgument, foo.Namespace, foo.Name, f.namespace)
	}
	return nil
}

// timeoutOf turns opts.TimeoutSeconds into a client-side request timeout, so the HTTP
// request does not outlive what the server was asked for.
func timeoutOf(opts metav1.ListOptions) time.Duration {
	if opts.TimeoutSeconds == nil {
		return 0
	}
	return time.Duration(*opts.TimeoutSeconds) * time.Second
}
