package reflector

import "errors"

// What counts as a relist (reflector_relists_total, RelistsMetricName): a fetch of the
// whole state — a LIST or a watch-list — that the server answered (a LIST's first page
// arrived, a watch-list's stream opened) after an earlier fetch had been answered. It
// is counted once, at that answer, under the reason that sent the reflector to fetch
// again: the first cause noted since the last counted fetch (RelistReason of it).
//
// So every path that fetches the state again counts, and only such a path: a cycle
// that ended (Run: a watch's 410, a very short watch, any error — B1), a LIST's 410
// retried at RV "" (L3), a watch-list's 410 retried (S3), a watch-list stream cut
// before its end bookmark (S4, S7), a watch-list that failed partway and fell back to
// a LIST (S5). A fetch the server refused — a first LIST answered 403, a watch-list
// refused with 429 and retried — fetched nothing and counts nothing; neither does the
// first answered fetch, which is a list, not a relist.
//
// Why at the answer and not at the decision: one re-fetch can pass through several
// decisions (a watch's 410 ends the cycle, the relist's LIST gets 410 again and is
// retried at RV "": one state fetched once more, not twice), and a decision whose
// fetch the server refuses has cost the server nothing.

// errCycleEnded is the reason noted for a cycle that ended without an error.
var errCycleEnded = errors.New("the list-and-watch cycle ended")

// refetchBecause notes why the state will be fetched again, unless an earlier cause
// is still pending.
func (r *Reflector[T]) refetchBecause(err error) {
	if err == nil {
		err = errCycleEnded
	}
	if r.refetchReason == nil {
		r.refetchReason = err
	}
}

// fetchAnswered records that the server answered a fetch of the whole state: a
// relist, counted under the pending reason, when an earlier fetch was answered.
func (r *Reflector[T]) fetchAnswered() {
	if r.answered {
		r.metrics.relisted(r.refetchReason)
	}
	r.answered, r.refetchReason = true, nil
}
