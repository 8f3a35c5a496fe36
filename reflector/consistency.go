package reflector

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeinternals/informers/internal/objects"
)

// ErrInconsistentWatchList is wrapped by every InconsistencyError.
var ErrInconsistentWatchList = errors.New("the watch-list differs from a LIST at the same resourceVersion")

// InconsistencyError is what the watch-list consistency check (Options.CheckWatchList)
// found: the objects a watch-list streamed differ from those a LIST at the same
// resourceVersion returns.
type InconsistencyError struct {
	// Reflector is the reflector's name.
	Reflector string
	// ResourceVersion is the RV of the watch-list's end bookmark, at which both were read.
	ResourceVersion string
	// Differences lists every object that differs, ordered by key.
	Differences []Difference
}

// Difference is one object on which the stream and the LIST disagree.
type Difference struct {
	// Key is namespace/name, or name for a cluster-scoped object.
	Key string
	// UID identifies the object; two objects with one key and two UIDs (deleted and
	// created again) are two differences.
	UID types.UID
	// Streamed is the object's resourceVersion in the watch-list, "" when the stream
	// did not have it.
	Streamed string
	// Listed is its resourceVersion in the LIST, "" when the LIST did not have it.
	Listed string
}

func (d Difference) String() string {
	switch {
	case d.Streamed == "":
		return fmt.Sprintf("%s (uid %s) listed at rv %s but not streamed", d.Key, d.UID, d.Listed)
	case d.Listed == "":
		return fmt.Sprintf("%s (uid %s) streamed at rv %s but not listed", d.Key, d.UID, d.Streamed)
	default:
		return fmt.Sprintf("%s (uid %s) streamed at rv %s, listed at rv %s", d.Key, d.UID, d.Streamed, d.Listed)
	}
}

// maxNamed bounds how many differences Error names; Differences has them all.
const maxNamed = 10

func (e *InconsistencyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %v (rv %s): %d object(s): ", e.Reflector, ErrInconsistentWatchList, e.ResourceVersion, len(e.Differences))
	for i, d := range e.Differences {
		if i == maxNamed {
			fmt.Fprintf(&b, "; and %d more", len(e.Differences)-maxNamed)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(d.String())
	}
	return b.String()
}

func (e *InconsistencyError) Unwrap() error { return ErrInconsistentWatchList }

// checkWatchList is the watch-list consistency check: it LISTs at exactly rv
// (resourceVersionMatch=Exact, unpaged) and compares the result with the streamed
// items by UID and resourceVersion.
//
// Pitfall: that LIST is not necessarily read from etcd. Since 1.34 the apiserver
// answers an Exact LIST from its watch cache's snapshot of rv when it has one
// (ListFromCacheSnapshot, beta and on; k8s.io/apiserver
// pkg/storage/cacher/cacher.go Cacher.ShouldDelegateExactRV), and from etcd
// otherwise. So the check catches what changed between the apiserver's cache and
// this reflector — an event lost or altered by the stream, a proxy or the
// decoding — not a watch cache that diverged from etcd.
//
// It returns the items the store should get: the LIST's when the two differ (the
// state at rv is what the stream should have carried, and the watch goes on from rv),
// the stream's otherwise or when the check cannot run. A difference is logged at
// Error level and passed to Options.OnInconsistency; a check that cannot run (the
// LIST failed, or rv is "0", which Exact does not accept) is logged as a warning.
//
// Differences from client-go: client-go retries the LIST every second until it
// succeeds and then panics on a difference (the check is meant for its CI); we try
// once, keep the reflector running, and repair the store.
//
// client-go: util/consistencydetector/data_consistency_detector.go CheckDataConsistency
func (r *Reflector[T]) checkWatchList(ctx context.Context, streamed []T, rv string) []T {
	if rv == "" || rv == "0" {
		r.logger.Warn("watch-list consistency check skipped: a LIST with resourceVersionMatch=Exact needs a specific resourceVersion", "resourceVersion", rv)
		return streamed
	}
	listed, err := r.lw.List(ctx, metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if err != nil {
		if ctx.Err() == nil {
			r.logger.Warn("watch-list consistency check skipped: the LIST failed", "resourceVersion", rv, "err", err)
		}
		return streamed
	}
	diffs := compareByUID(streamed, listed.Items)
	if len(diffs) == 0 {
		r.logger.Debug("watch-list consistency check passed", "resourceVersion", rv, "objects", len(streamed))
		return streamed
	}
	ierr := &InconsistencyError{Reflector: r.name, ResourceVersion: rv, Differences: diffs}
	r.logger.Error("watch-list inconsistent with a LIST at its resourceVersion; the store gets the LIST's objects", "err", ierr)
	if r.opts.OnInconsistency != nil {
		r.opts.OnInconsistency(ierr)
	}
	return listed.Items
}

// compareByUID returns the objects on which streamed and listed differ, ordered by
// key then UID. An object without a UID (a hand-made test object) is identified by
// its key.
func compareByUID[T Object](streamed, listed []T) []Difference {
	type version struct {
		key, rv string
		uid     types.UID
	}
	id := func(o T) string {
		if uid := o.GetUID(); uid != "" {
			return string(uid)
		}
		return "key:" + objects.Key(o.GetNamespace(), o.GetName())
	}
	fromStream := make(map[string]version, len(streamed))
	for _, o := range streamed {
		fromStream[id(o)] = version{objects.Key(o.GetNamespace(), o.GetName()), o.GetResourceVersion(), o.GetUID()}
	}
	var diffs []Difference
	for _, o := range listed {
		k := id(o)
		s, ok := fromStream[k]
		delete(fromStream, k)
		switch {
		case !ok:
			diffs = append(diffs, Difference{Key: objects.Key(o.GetNamespace(), o.GetName()), UID: o.GetUID(), Listed: o.GetResourceVersion()})
		case s.rv != o.GetResourceVersion():
			diffs = append(diffs, Difference{Key: s.key, UID: s.uid, Streamed: s.rv, Listed: o.GetResourceVersion()})
		}
	}
	for _, s := range fromStream {
		diffs = append(diffs, Difference{Key: s.key, UID: s.uid, Streamed: s.rv})
	}
	slices.SortFunc(diffs, func(a, b Difference) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), strings.Compare(string(a.UID), string(b.UID)))
	})
	return diffs
}
