package informer

import (
	"errors"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/reflector"
)

// syncErrors remembers the last error of the reflector's list/watch cycles, so that
// WaitForCacheSync can say why an informer does not sync instead of hanging silently
// (a missing CRD shows up as 404, missing RBAC as 403).
//
// Why: client-go's HasSynced is a bool with no error; a controller without
// permission just waits forever at WaitForCacheSync.
type syncErrors struct {
	mu sync.Mutex
	// last is the error of the last failed cycle, nil after a successful list.
	// Guarded by mu.
	last error
	// changed is closed when last changes, and replaced by a fresh channel: a waiter
	// that read last with it wakes up for the next change. Guarded by mu.
	changed chan struct{}
}

func newSyncErrors() syncErrors { return syncErrors{changed: make(chan struct{})} }

// record stores the error of a failed cycle.
func (e *syncErrors) record(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.last = err
	e.notifyLocked()
}

// clear forgets the last error after a successful list.
func (e *syncErrors) clear() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.last != nil {
		e.last = nil
		e.notifyLocked()
	}
}

func (e *syncErrors) notifyLocked() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// state returns the last error and a channel closed at its next change.
func (e *syncErrors) state() (<-chan struct{}, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.changed, e.last
}

// isHopeless: errors that will repeat until a person acts (create the CRD, grant RBAC,
// fix the informer's Options, turn on the apiserver's feature gate for a shard).
func isHopeless(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) ||
		errors.Is(err, reflector.ErrInvalidOptions) || errors.Is(err, listwatch.ErrInvalidOptions) ||
		errors.Is(err, listwatch.ErrServerNotSharding)
}
