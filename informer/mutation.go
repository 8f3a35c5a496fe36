package informer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/diff"

	"github.com/kubeinternals/informers/indexer"
)

// MutationDetector configures the cache mutation detector (Options.MutationDetector):
// the informer keeps a deep copy of every object it hands to the handlers as an add or
// an update — a resync's updates included — and compares each object with its copy
// every Period, for Retain to 2×Retain after the copy was taken. An object that no longer equals its copy was changed
// by someone who must only read it — a handler, or a caller of the Lister — and every
// other reader sees the change. It is reported once, as a *MutationError: logged at
// Error level and passed to OnMutation.
//
// It costs a deep copy of every add, update and resynced object and a deep comparison of all of them
// every Period: for tests and CI, as client-go's KUBE_CACHE_MUTATION_DETECTOR is.
//
// client-go: tools/cache/mutation_detector.go defaultCacheMutationDetector
type MutationDetector struct {
	// Period is how often the copies are compared; 0 means 1s, client-go's.
	Period time.Duration
	// Retain is how long an object is watched before its copy is dropped (it is then
	// compared for one more Retain); 0 means 2 minutes, client-go's.
	Retain time.Duration
	// OnMutation, if set, is called with each mutated object, after it is logged (a
	// test can fail on it). It must return quickly.
	OnMutation func(err *MutationError)
}

// ErrCacheMutated is wrapped by every MutationError.
var ErrCacheMutated = errors.New("an object in the informer's cache was mutated")

// MutationError is one cached object that no longer equals the copy taken when the
// informer handed it to the handlers (cached it, or resynced it).
type MutationError struct {
	// Informer is the informer's name.
	Informer string
	// Key is the object's namespace/name, as it was cached.
	Key string
	// Diff is a unified diff of the object's JSON, from the copy (-) to the cached
	// object as it is now (+).
	Diff string
}

func (e *MutationError) Error() string {
	return fmt.Sprintf("informer %s: %v: %s (objects from the cache and from handlers are shared and must only be read; DeepCopy before changing one):\n%s",
		e.Informer, ErrCacheMutated, e.Key, e.Diff)
}

func (e *MutationError) Unwrap() error { return ErrCacheMutated }

// keptCopy is an object as cached and a deep copy of it taken then.
type keptCopy[T indexer.Object] struct {
	key          string
	cached, copy T
}

// mutationDetector is the state of one informer's detector.
type mutationDetector[T indexer.Object] struct {
	informer string
	opts     MutationDetector
	logger   *slog.Logger // carries the informer's name ("informer" attribute)

	mu    sync.Mutex
	added []keptCopy[T] // guarded by mu: copies taken since the last comparison

	// compareMu serialises comparisons (the periodic one and CheckMutations).
	compareMu sync.Mutex
	// current and previous are the two generations compared. Guarded by compareMu.
	current, previous []keptCopy[T]
	rotated           time.Time // guarded by compareMu: when current began
}

func newMutationDetector[T indexer.Object](informer string, opts MutationDetector, logger *slog.Logger) *mutationDetector[T] {
	opts.Period = cmp.Or(opts.Period, time.Second)
	opts.Retain = cmp.Or(opts.Retain, 2*time.Minute)
	return &mutationDetector[T]{informer: informer, opts: opts, logger: logger, rotated: time.Now()}
}

// add keeps a deep copy of obj, which the informer has just cached or resynced.
//
// client-go: tools/cache/mutation_detector.go defaultCacheMutationDetector.AddObject
func (d *mutationDetector[T]) add(obj T) {
	c, ok := obj.DeepCopyObject().(T)
	if !ok {
		return // DeepCopyObject of a generated type always returns its own type
	}
	key, _ := indexer.MetaNamespaceKeyFunc(obj)
	d.mu.Lock()
	d.added = append(d.added, keptCopy[T]{key: key, cached: obj, copy: c})
	d.mu.Unlock()
}

// run compares every Period until ctx ends.
//
// client-go: tools/cache/mutation_detector.go defaultCacheMutationDetector.Run
func (d *mutationDetector[T]) run(ctx context.Context) {
	tick := time.NewTicker(d.opts.Period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			d.compare()
		}
	}
}

// compare checks every kept copy against its object, reports each mutated one and
// stops watching it, and returns what it found.
//
// client-go: tools/cache/mutation_detector.go defaultCacheMutationDetector.CompareObjects
func (d *mutationDetector[T]) compare() []*MutationError {
	d.compareMu.Lock()
	defer d.compareMu.Unlock()
	if time.Since(d.rotated) >= d.opts.Retain {
		d.previous, d.current, d.rotated = d.current, nil, time.Now()
	}
	d.mu.Lock()
	d.current = append(d.current, d.added...)
	d.added = nil
	d.mu.Unlock()
	var found []*MutationError
	d.previous = d.check(d.previous, &found)
	d.current = d.check(d.current, &found)
	for _, err := range found {
		d.logger.Error("cache mutation detected", "key", err.Key, "err", err)
		if d.opts.OnMutation != nil {
			d.opts.OnMutation(err)
		}
	}
	return found
}

// check keeps the copies whose object is unchanged and appends a MutationError for
// each other one.
func (d *mutationDetector[T]) check(kept []keptCopy[T], found *[]*MutationError) []keptCopy[T] {
	out := kept[:0]
	for _, k := range kept {
		if reflect.DeepEqual(k.cached, k.copy) {
			out = append(out, k)
			continue
		}
		*found = append(*found, &MutationError{Informer: d.informer, Key: k.key, Diff: diff.Diff(k.copy, k.cached)})
	}
	clear(kept[len(out):]) // drop the references the slice no longer uses
	return out
}

// CheckMutations compares every object the mutation detector watches with its copy
// now, reports each mutated one as the periodic comparison does (log, OnMutation),
// and returns them. It returns nil when Options.MutationDetector is nil.
//
// client-go: tools/cache/mutation_detector.go defaultCacheMutationDetector.CompareObjects
func (s *SharedIndexInformer[T]) CheckMutations() []*MutationError {
	if s.mutations == nil {
		return nil
	}
	return s.mutations.compare()
}
