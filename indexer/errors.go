package indexer

import (
	"errors"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The sentinel errors of this package. Every error a store or lister returns wraps one
// of them (or ErrNilObject / ErrMalformedKey from keys.go), so callers can branch with
// errors.Is and still print a message that names the index, key or object involved.
var (
	// ErrUnknownIndex: a query named an index that was never registered.
	ErrUnknownIndex = errors.New("index does not exist")
	// ErrIndexConflict: AddIndexers was given a name that is already registered.
	ErrIndexConflict = errors.New("index already exists")
	// ErrNilIndexFunc: an Indexers map held a nil IndexFunc.
	ErrNilIndexFunc = errors.New("index function is nil")
	// ErrIndexFunc: an IndexFunc returned an error. The operation that called it
	// changed nothing.
	ErrIndexFunc = errors.New("index function failed")
	// ErrKeyFunc: the store's KeyFunc returned an error. The operation changed nothing.
	ErrKeyFunc = errors.New("key function failed")
	// ErrNotFound: a Lister's Get found no object with that name.
	ErrNotFound = errors.New("object not found in cache")
	// ErrInvalidOptions: a constructor was given options it cannot work with (a
	// negative size or duration); the message names the field.
	ErrInvalidOptions = errors.New("indexer: invalid options")
)

// NotFoundError is what a Lister's Get returns for a missing object. It wraps
// ErrNotFound, and it also reports itself as an HTTP 404 "NotFound" API status, so
// k8s.io/apimachinery/pkg/api/errors.IsNotFound(err) is true for it, exactly as for
// the error a generated client-go lister returns.
//
// Why both: controllers written against client-go test apierrors.IsNotFound(err) after
// a lister Get, and code that mixes a lister Get with a live GET wants one check for
// both. errors.Is(err, ErrNotFound) is the check that needs no apimachinery import.
//
// client-go: listers/generic_helpers.go ResourceIndexer.Get
type NotFoundError struct {
	// Namespace is empty for a cluster-scoped lookup.
	Namespace string
	Name      string
}

// Error says which object was missing.
func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s: %q", ErrNotFound, ObjectKey(e.Namespace, e.Name))
}

// Unwrap makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// Status implements apierrors.APIStatus, which is how apierrors.IsNotFound recognises
// the error without this package importing k8s.io/apimachinery/pkg/api/errors.
//
// Simplified: client-go fills Details.Group and Details.Kind from the GroupResource the
// lister was built with; our Lister is built from the cache alone and does not know the
// resource, so Details names only the object.
func (e *NotFoundError) Status() metav1.Status {
	return metav1.Status{
		Status:  metav1.StatusFailure,
		Reason:  metav1.StatusReasonNotFound,
		Code:    http.StatusNotFound,
		Message: e.Error(),
		Details: &metav1.StatusDetails{Name: e.Name},
	}
}
