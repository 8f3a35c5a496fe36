package informer

import (
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// syncErrors remembers the last error of the reflector's list/watch cycles, so that
// WaitForCacheSync can say why an informer does not sync instead of hanging silently
// (a missing CRD shows up as 404, missing RBAC as 403).
//
// Why: client-go's HasSynced is a bool with no error; a controller without
// permission just waits forever at WaitForCacheSync (user pain point 14).
type syncErrors struct {
	mu sync.Mutex
	// last is the error of the last failed cycle, nil after a successful list.
	// Guarded by mu.
	last error
	// hopeless is closed when last is an error that retrying will not fix by
	// itself (401, 403, 404); replaced by a fresh channel after a successful list.
	// Guarded by mu.
	hopeless chan struct{}
	// hopelessClosed records that hopeless is closed. Guarded by mu.
	hopelessClosed bool
}

func newSyncErrors() syncErrors { return syncErrors{hopeless: make(chan struct{})} }

func (e *syncErrors) record(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.last = err
	if isHopeless(err) && !e.hopelessClosed {
		e.hopelessClosed = true
		close(e.hopeless)
	}
}

func (e *syncErrors) clear() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.last = nil
	if e.hopelessClosed {
		e.hopeless, e.hopelessClosed = make(chan struct{}), false
	}
}

// state returns a channel closed when the last error is hopeless, and that error.
func (e *syncErrors) state() (<-chan struct{}, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.hopeless, e.last
}

// isHopeless: errors that will repeat until a person acts (create the CRD, grant RBAC).
func isHopeless(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)
}
