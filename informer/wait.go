package informer

import (
	"context"
	"errors"
	"fmt"
)

// ErrNotSynced is wrapped by WaitForCacheSync's error.
var ErrNotSynced = errors.New("cache did not sync")

// Syncer is what WaitForCacheSync waits for: an informer or a handler Registration.
type Syncer interface {
	// Synced is closed once synced.
	Synced() <-chan struct{}
	syncState() (hopeless <-chan struct{}, last error)
}

// syncState reports the informer's last list/watch error.
func (s *SharedIndexInformer[T]) syncState() (<-chan struct{}, error) { return s.errs.state() }

// WaitForCacheSync waits until every syncer has synced and returns nil. It returns an
// error wrapping ErrNotSynced — and the reflector's last error, such as 403 Forbidden
// or 404 Not Found for a CRD that is not installed — when ctx ends first, or at once
// when an unsynced informer's last error is one that retrying cannot fix by itself
// (401, 403, 404). It waits on channels, never polls.
//
// Differences from client-go: client-go's WaitForCacheSync polls every 100ms, returns
// only a bool, and waits forever (or until its stop channel) when the list keeps
// failing; the reason is only in the logs.
//
// client-go: tools/cache/shared_informer.go WaitForCacheSync, WaitFor
func WaitForCacheSync(ctx context.Context, syncers ...Syncer) error {
	for i, s := range syncers {
		if err := waitOne(ctx, i, s); err != nil {
			return err
		}
	}
	return nil
}

func waitOne(ctx context.Context, i int, s Syncer) error {
	for {
		hopeless, _ := s.syncState()
		select {
		case <-s.Synced():
			return nil
		case <-ctx.Done():
			return notSynced(i, ctx.Err(), s)
		case <-hopeless:
			select {
			case <-s.Synced():
				return nil
			default:
			}
			if _, last := s.syncState(); last != nil {
				return notSynced(i, nil, s)
			}
			// A list succeeded meanwhile and replaced the channel: wait again.
		}
	}
}

func notSynced(i int, ctxErr error, s Syncer) error {
	_, last := s.syncState()
	switch {
	case last != nil && ctxErr != nil:
		return fmt.Errorf("%w (syncer %d): %w; last list/watch error: %w", ErrNotSynced, i, ctxErr, last)
	case last != nil:
		return fmt.Errorf("%w (syncer %d): %w", ErrNotSynced, i, last)
	default:
		return fmt.Errorf("%w (syncer %d): %w", ErrNotSynced, i, ctxErr)
	}
}
