package informer

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNotSynced is wrapped by WaitForCacheSync's error.
var ErrNotSynced = errors.New("cache did not sync")

// Syncer is what WaitForCacheSync waits for: an informer or a handler Registration.
type Syncer interface {
	// Synced is closed once synced.
	Synced() <-chan struct{}
	// syncState returns the informer's last list/watch error and a channel closed
	// when it changes.
	syncState() (changed <-chan struct{}, last error)
	syncName() string
}

// syncState reports the informer's last list/watch error.
func (s *SharedIndexInformer[T]) syncState() (<-chan struct{}, error) { return s.errs.state() }

// syncName names the informer in WaitForCacheSync's errors and reports.
func (s *SharedIndexInformer[T]) syncName() string {
	switch {
	case s.description != "":
		return s.description
	case s.opts.Name != "":
		return "informer " + s.opts.Name
	default:
		return "informer"
	}
}

// WaitOptions changes how WaitForCacheSyncWithOptions waits. The zero value is
// WaitForCacheSync's behaviour.
type WaitOptions struct {
	// KeepWaitingOn is asked about each error that would end the wait at once (401,
	// 403, 404: errors retrying cannot fix by itself); when it returns true the wait goes
	// on — the reflector keeps retrying with backoff — until the cache syncs or ctx ends.
	// Nil: every such error ends the wait (fail fast).
	//
	// Why: right after a CRD is created, the apiserver (or one replica of an HA
	// apiserver) can answer 404 for a moment, and a controller started before its CRD
	// should simply wait for it, as sample-controller does. Pass apierrors.IsNotFound to
	// wait for a CRD yet still fail fast on a missing RBAC permission (403).
	KeepWaitingOn func(error) bool
	// Report, if set, is called every ReportEvery while a syncer has not synced, with
	// why: what is waited for and the last list/watch error (nil when the list is merely
	// slow). Calls come from the waiting goroutine, one at a time.
	Report func(Waiting)
	// ReportEvery is the period of Report; 0 means 5s.
	ReportEvery time.Duration
}

// Waiting is one report of WaitOptions.Report: a syncer that has not synced yet.
type Waiting struct {
	// Name names the informer (a Factory informer by its Resource: `foos.samplecontroller.k8s.io`)
	// or the handler registration.
	Name string
	// Err is the informer's last list/watch error, nil when none failed since the last
	// successful list.
	Err error
	// Since is how long this wait has lasted.
	Since time.Duration
}

// WaitForCacheSync waits until every syncer has synced and returns nil. It returns an
// error wrapping ErrNotSynced — and the reflector's last error, such as 403 Forbidden
// or 404 Not Found for a CRD that is not installed — when ctx ends first, or at once
// when an unsynced informer's last error is one that retrying cannot fix by itself
// (401, 403, 404). It waits on channels, never polls. The error names the syncer.
// WaitForCacheSyncWithOptions keeps waiting through such errors and reports why it
// waits.
//
// Differences from client-go: client-go's WaitForCacheSync polls every 100ms, returns
// only a bool, and waits forever (or until its stop channel) when the list keeps
// failing; the reason is only in the logs.
//
// client-go: tools/cache/shared_informer.go WaitForCacheSync, WaitFor
func WaitForCacheSync(ctx context.Context, syncers ...Syncer) error {
	return WaitForCacheSyncWithOptions(ctx, WaitOptions{}, syncers...)
}

// WaitForCacheSyncWithOptions is WaitForCacheSync with WaitOptions.
func WaitForCacheSyncWithOptions(ctx context.Context, opts WaitOptions, syncers ...Syncer) error {
	if opts.ReportEvery <= 0 {
		opts.ReportEvery = 5 * time.Second
	}
	w := waiter{opts: opts, start: time.Now()}
	if opts.Report != nil {
		w.tick = time.NewTicker(opts.ReportEvery)
		defer w.tick.Stop()
	}
	for _, s := range syncers {
		if err := w.waitOne(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// waiter is one WaitForCacheSyncWithOptions call.
type waiter struct {
	opts  WaitOptions
	start time.Time
	// tick drives Report; nil when there is no Report.
	tick *time.Ticker
}

func (w *waiter) waitOne(ctx context.Context, s Syncer) error {
	var tick <-chan time.Time
	if w.tick != nil {
		tick = w.tick.C
	}
	for {
		changed, last := s.syncState()
		if isSynced(s) {
			return nil
		}
		if last != nil && isHopeless(last) && (w.opts.KeepWaitingOn == nil || !w.opts.KeepWaitingOn(last)) {
			return notSynced(s, nil)
		}
		select {
		case <-s.Synced():
			return nil
		case <-ctx.Done():
			return notSynced(s, ctx.Err())
		case <-tick:
			w.opts.Report(Waiting{Name: s.syncName(), Err: last, Since: time.Since(w.start)})
		case <-changed:
			// A new error, or a list succeeded: look again.
		}
	}
}

func isSynced(s Syncer) bool {
	select {
	case <-s.Synced():
		return true
	default:
		return false
	}
}

func notSynced(s Syncer, ctxErr error) error {
	_, last := s.syncState()
	name := s.syncName()
	switch {
	case last != nil && ctxErr != nil:
		return fmt.Errorf("%w (%s): %w; last list/watch error: %w", ErrNotSynced, name, ctxErr, last)
	case last != nil:
		return fmt.Errorf("%w (%s): %w", ErrNotSynced, name, last)
	default:
		return fmt.Errorf("%w (%s): %w", ErrNotSynced, name, ctxErr)
	}
}
