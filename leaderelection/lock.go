package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// Lock is the object candidates compete for. The Elector reads it with Get and writes
// it with Create or Update; a Lock must make a write fail when the object changed since
// the Lock last read or wrote it (the apiserver's resourceVersion precondition), or two
// candidates could both believe their write won.
//
// Get returns an error for which apierrors.IsNotFound is true when the object does not
// exist yet. A Lock is used by one Elector, from one goroutine at a time.
//
// client-go: tools/leaderelection/resourcelock/interface.go Interface
type Lock interface {
	// Get reads the record and remembers the object's version for the next Update.
	Get(ctx context.Context) (Record, error)
	// Create creates the object holding r; it fails if the object exists.
	Create(ctx context.Context, r Record) error
	// Update writes r over the version Get or the last write saw; it fails with a
	// 409 Conflict if anyone wrote the object since.
	Update(ctx context.Context, r Record) error
	// Identity is this candidate's name, the Holder it writes.
	Identity() string
	// Describe names the object for logs and traces: "namespace/name".
	Describe() string
}

// LeaseLockOptions say which Lease to compete for, and as whom.
type LeaseLockOptions struct {
	// Namespace and Name of the coordination.k8s.io/v1 Lease. Both are required.
	Namespace, Name string
	// Identity is this candidate's name, unique among the candidates: the Pod's name,
	// or hostname plus a random suffix. Required.
	Identity string
	// Labels are set on the Lease when it is created or written.
	Labels map[string]string
}

// LeaseLock is a Lock over a coordination.k8s.io/v1 Lease, read and written with GET,
// POST and PUT. The PUT carries the resourceVersion of the Lease as last read or
// written, so the apiserver refuses it (409 Conflict) when another candidate wrote in
// between: that precondition is the only clock candidates share.
//
// client-go: tools/leaderelection/resourcelock/leaselock.go LeaseLock
type LeaseLock struct {
	client rest.Interface
	opts   LeaseLockOptions

	mu sync.Mutex
	// lease is the Lease as last read or written; its resourceVersion is the next
	// Update's precondition. Guarded by mu.
	lease *coordinationv1.Lease
}

// NewLeaseLock returns a LeaseLock that talks to the apiserver of cfg. The Lease need not
// exist: the first candidate creates it.
func NewLeaseLock(cfg *rest.Config, opts LeaseLockOptions) (*LeaseLock, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%w: nil rest.Config", ErrInvalidConfig)
	}
	if opts.Namespace == "" || opts.Name == "" {
		return nil, fmt.Errorf("%w: the Lease needs a namespace and a name (got %q/%q)", ErrInvalidConfig, opts.Namespace, opts.Name)
	}
	if opts.Identity == "" {
		return nil, fmt.Errorf("%w: empty identity: each candidate needs a unique one", ErrInvalidConfig)
	}
	scheme := runtime.NewScheme()
	if err := coordinationv1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("leaderelection: register coordination.k8s.io/v1: %w", err)
	}
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &coordinationv1.SchemeGroupVersion
	c.APIPath = "/apis"
	c.ContentType = runtime.ContentTypeJSON
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = "kubeinternals-leaderelection"
	}
	client, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("leaderelection: REST client for %s: %w", coordinationv1.SchemeGroupVersion, err)
	}
	opts.Labels = maps.Clone(opts.Labels)
	return &LeaseLock{client: client, opts: opts}, nil
}

// Get reads the Lease.
func (l *LeaseLock) Get(ctx context.Context) (Record, error) {
	lease := &coordinationv1.Lease{}
	err := l.client.Get().Namespace(l.opts.Namespace).Resource("leases").Name(l.opts.Name).
		Do(ctx).Into(lease)
	if err != nil {
		return Record{}, err
	}
	l.remember(lease)
	return RecordFromLeaseSpec(&lease.Spec), nil
}

// Create creates the Lease holding r.
func (l *LeaseLock) Create(ctx context.Context, r Record) error {
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: l.opts.Namespace, Name: l.opts.Name, Labels: maps.Clone(l.opts.Labels)},
		Spec:       r.LeaseSpec(),
	}
	out := &coordinationv1.Lease{}
	err := l.client.Post().Namespace(l.opts.Namespace).Resource("leases").Body(lease).Do(ctx).Into(out)
	if err != nil {
		return err
	}
	l.remember(out)
	return nil
}

// errNotRead is Update's error before any Get or Create: there is no version to write
// over.
var errNotRead = errors.New("leaderelection: the Lease was never read: Get or Create it first")

// Update PUTs r over the Lease as last read or written.
func (l *LeaseLock) Update(ctx context.Context, r Record) error {
	l.mu.Lock()
	if l.lease == nil {
		l.mu.Unlock()
		return errNotRead
	}
	lease := l.lease.DeepCopy()
	l.mu.Unlock()
	lease.Spec = r.LeaseSpec()
	if len(l.opts.Labels) > 0 && lease.Labels == nil {
		lease.Labels = map[string]string{}
	}
	maps.Copy(lease.Labels, l.opts.Labels)
	out := &coordinationv1.Lease{}
	err := l.client.Put().Namespace(l.opts.Namespace).Resource("leases").Name(l.opts.Name).
		Body(lease).Do(ctx).Into(out)
	if err != nil {
		return err
	}
	l.remember(out)
	return nil
}

func (l *LeaseLock) remember(lease *coordinationv1.Lease) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lease = lease
}

// Identity is the candidate's name.
func (l *LeaseLock) Identity() string { return l.opts.Identity }

// Describe is "namespace/name" of the Lease.
func (l *LeaseLock) Describe() string { return l.opts.Namespace + "/" + l.opts.Name }
