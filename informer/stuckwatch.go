package informer

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kubeinternals/informers/reflector"
)

// DefaultWatchStuckAfter is WatchHealthy's threshold when it is given 0 or less: two
// of kube-apiserver's bookmark intervals (reflector.BookmarkInterval, a minute). The
// watch cache sends every watch a bookmark about once a minute, however quiet the
// resource, so a watch silent for two minutes has missed at least one — which a
// stream that flows never does — while a bookmark up to a minute late does not yet
// count as stuck.
const DefaultWatchStuckAfter = 2 * reflector.BookmarkInterval

// ErrWatchStuck is wrapped by WatchHealthy's error.
var ErrWatchStuck = errors.New("watch stuck")

// WatchHealthy is a liveness check of the informer's watch. It returns nil, or an
// error wrapping ErrWatchStuck when, after the informer has synced, its watch has shown
// no sign of life for longer than stuckAfter: no event, no bookmark, no new watch
// opened, no relist begun or page of one received (reflector.WatchActivity.LastActive).
// A relist that keeps receiving pages is healthy however long it takes in all (many
// pages from a slow apiserver, or the LIST after a watch-list was cut too often);
// WatchActivity's Listing and ListSince say "relisting since …" to a check of your
// own, and the error, if its pages stop, says so. That is either a stream that
// is open but silent, or no stream at all — the reflector backing off while its
// requests fail. The error names the informer, says which of the two it is, for how
// long, and the threshold (with the last list/watch error, if a cycle failed since the
// last list). stuckAfter 0 or less means DefaultWatchStuckAfter; a threshold below
// reflector.BookmarkInterval reports every quiet resource as stuck.
//
// It returns nil before the informer has synced — whether the first list arrives is
// for readiness to say (WaitForCacheSync, a /readyz probe), not liveness — and once Run
// has returned. It is safe to call from any goroutine. See "Is my watch stuck?" in
// the package documentation for what it can and cannot tell.
//
// Differences from client-go: no counterpart. Neither its informers nor its factory
// have a health check, and its reflector keeps no time of the watch's last event
// beyond its watch-list warning (tools/cache/reflector.go
// initialEventsEndBookmarkTicker); leaderelection's HealthzAdaptor is the model of
// this check: a liveness check with a tolerance.
func (s *SharedIndexInformer[T]) WatchHealthy(stuckAfter time.Duration) error {
	if stuckAfter <= 0 {
		stuckAfter = DefaultWatchStuckAfter
	}
	if !s.HasSynced() {
		return nil
	}
	s.mu.Lock()
	refl, stopped := s.refl, s.stopped
	s.mu.Unlock()
	if refl == nil || stopped {
		return nil
	}
	_, last := s.errs.state()
	return watchStuck(s.stuckName(), refl.WatchActivity(), time.Now(), stuckAfter, last)
}

// WatchActivity is its reflector's reflector.WatchActivity: whether a watch is open,
// and when it last showed life — what WatchHealthy judges, for a check of your own
// (the zero value before Run). It is safe to call from any goroutine.
func (s *SharedIndexInformer[T]) WatchActivity() reflector.WatchActivity {
	s.mu.Lock()
	refl := s.refl
	s.mu.Unlock()
	if refl == nil {
		return reflector.WatchActivity{}
	}
	return refl.WatchActivity()
}

// stuckName names the informer in WatchHealthy's error: a Factory informer by its
// Resource, else by Options.Name or its Go type, as its metrics are.
func (s *SharedIndexInformer[T]) stuckName() string {
	if s.description != "" {
		return s.description
	}
	return "informer " + cmp.Or(s.opts.Name, fmt.Sprintf("%T", *new(T)))
}

// watchStuck is WatchHealthy's verdict on activity a at now: nil while the watch's
// last sign of life is no older than after.
func watchStuck(name string, a reflector.WatchActivity, now time.Time, after time.Duration, last error) error {
	silent := now.Sub(a.LastActive())
	if silent <= after {
		return nil
	}
	if a.Open {
		return fmt.Errorf("%w (%s): its watch is open but has delivered nothing — no event, no bookmark — for %v, longer than %v",
			ErrWatchStuck, name, approx(silent), after)
	}
	if a.Listing {
		page := "no page yet"
		if !a.LastPage.IsZero() {
			page = fmt.Sprintf("its last page came %v ago", approx(now.Sub(a.LastPage)))
		}
		return fmt.Errorf("%w (%s): relisting since %v ago with no watch open, %s, nothing received for %v, longer than %v",
			ErrWatchStuck, name, approx(now.Sub(a.ListSince)), page, approx(silent), after)
	}
	down := silent
	if !a.Since.IsZero() {
		down = now.Sub(a.Since)
	}
	err := fmt.Errorf("%w (%s): no watch open for %v, and nothing received for %v, longer than %v",
		ErrWatchStuck, name, approx(down), approx(silent), after)
	if last != nil {
		err = fmt.Errorf("%w; last list/watch error: %w", err, last)
	}
	return err
}

// approx rounds d to the millisecond for a message. Why not to the second above a
// minute: "for 2m0s, longer than 2m0s" is what a silence of 2m0.2s would read.
func approx(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// WatchHealthy is SharedIndexInformer.WatchHealthy for every informer the factory
// started: nil when none is stuck, else the errors of those that are, one per line,
// ordered by informer, each wrapping ErrWatchStuck. An informer not started, or not
// synced yet, is not checked: WaitForCacheSync is its check.
//
// Differences from client-go: no counterpart; its sharedInformerFactory has no health
// check.
func (f *Factory) WatchHealthy(stuckAfter time.Duration) error {
	f.mu.Lock()
	var started []factoryInformer
	for key, inf := range f.informers {
		if f.started[key] {
			started = append(started, inf)
		}
	}
	f.mu.Unlock()
	slices.SortFunc(started, func(a, b factoryInformer) int { return cmp.Compare(a.syncName(), b.syncName()) })
	var errs []error
	for _, inf := range started {
		if err := inf.WatchHealthy(stuckAfter); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
