package parity

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The failures TestReflector arms on the scripted server: each is the answer to the
// next request of its kind, on each endpoint, instead of the normal one; the two
// reflectors send the same requests, so each side meets it at the same point of its
// story.

// requestKind is which requests a fault answers.
type requestKind int

const (
	faultList      requestKind = iota // a LIST without a continue token (a first page, or a whole list)
	faultContinue                     // a LIST page with a continue token
	faultWatch                        // a plain WATCH
	faultWatchList                    // a watch with sendInitialEvents=true
)

// serverFault is one armed failure.
type serverFault int

const (
	listExpired serverFault = iota
	listTooLarge
	listInternal
	continueExpired
	watchExpired
	watchTooLarge
	watchListExpired
	watchListTooLarge
	watchTooMany
	watchListTooMany
	// numFaults counts the faults TestReflector generates. The ones after it only
	// exceptions arm: the differential test keeps off them.
	numFaults
	// watchListCut opens the next watch-list, sends its first initial event and ends
	// the stream, before the end bookmark: docs/defaults.md's row "a watch-list stream
	// cut before its end bookmark".
	watchListCut
)

func (f serverFault) kind() requestKind {
	switch f {
	case continueExpired:
		return faultContinue
	case watchExpired, watchTooLarge, watchTooMany:
		return faultWatch
	case watchListExpired, watchListTooLarge, watchListTooMany, watchListCut:
		return faultWatchList
	default:
		return faultList
	}
}

func (f serverFault) String() string {
	return [...]string{
		"the next LIST: 410 Expired",
		"the next LIST: too large resource version",
		"the next LIST: 500 InternalError",
		"the next continue page: 410 Expired",
		"the next WATCH: refused, 410 Expired",
		"the next WATCH: refused, too large resource version",
		"the next watch-list: refused, 410 Expired",
		"the next watch-list: refused, too large resource version",
		"the next WATCH: refused, 429 TooManyRequests",
		"the next watch-list: refused, 429 TooManyRequests",
		"(not a fault)",
		"the next watch-list: cut after its first initial event",
	}[f]
}

// answer is how the server's log line ends for this failure.
func (f serverFault) answer() string {
	switch f {
	case listExpired, continueExpired, watchExpired, watchListExpired:
		return "410 Expired"
	case listInternal:
		return "500 InternalError"
	case watchListCut:
		return "cut after 1 initial event"
	case watchTooMany, watchListTooMany:
		return "429 TooManyRequests"
	default:
		return "504 too large resource version"
	}
}

// err is the error the ListerWatcher returns: what client-go's REST client makes of
// the API server's Status. A 410 says Expired, as API servers since 1.18 do: on a
// continue page, a 410 that says Gone (1.17 and older) is followed by a full list at the
// original RV in our pager but returned by client-go's (which then relists at RV ""), a
// difference reflector/pager.go Pager.List states and docs/defaults.md does not list.
//
// client-go: tools/pager/pager.go ListPager.list (errors.IsResourceExpired)
func (f serverFault) err() error {
	switch f {
	case listExpired, continueExpired, watchExpired, watchListExpired:
		return apierrors.NewResourceExpired("too old resource version")
	case listInternal:
		return apierrors.NewInternalError(fmt.Errorf("etcd is unhappy"))
	case watchTooMany, watchListTooMany:
		return apierrors.NewTooManyRequests("slow down", 1)
	default:
		// A 504 carrying the ResourceVersionTooLarge cause, as the API server answers
		// a resourceVersion newer than it has seen.
		err := apierrors.NewTimeoutError("Too large resource version: 100, current: 50", 1)
		err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
		return err
	}
}

// arm adds f to both endpoints.
func (s *cmServer) arm(f serverFault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range []*endpoint{&s.ours, &s.theirs} {
		e.faults = append(e.faults, f)
	}
}

// disarm drops the faults no request met, and says which in each endpoint's log:
// each step's failures belong to that step's requests.
func (s *cmServer) disarm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range []*endpoint{&s.ours, &s.theirs} {
		for _, f := range e.faults {
			e.log = append(e.log, fmt.Sprintf("(not met: %s)", f))
		}
		e.faults = nil
	}
}

// takeFault removes and returns the first armed fault for a request of kind k.
func (e *endpoint) takeFault(k requestKind) (serverFault, bool) {
	for i, f := range e.faults {
		if f.kind() == k {
			e.faults = append(e.faults[:i:i], e.faults[i+1:]...)
			return f, true
		}
	}
	return 0, false
}

// Both reflectors back off between cycles by the same rule: 800ms, doubling up to
// 30s, each delay plus a random jitter of up to 100%, the sequence started over at a
// failure more than 2 minutes after it began. The jitter makes the waits differ, so a
// wait is written as the step of that sequence whose bounds [base, 2·base) hold it.
// The bounds of steps 0–4 are disjoint, so equal words on both sides mean both waited
// within the bounds of the same step; TestReflector keeps every chain of backoffs
// shorter than that.
//
// client-go: tools/cache/reflector.go defaultBackoffInit, defaultBackoffMax, defaultBackoffFactor, defaultBackoffJitter
const (
	backoffInit = 800 * time.Millisecond
	backoffMax  = 30 * time.Second
)

func describeWait(d time.Duration) string {
	if d == 0 {
		return "at once"
	}
	base := backoffInit
	for step := 0; step < 5; step++ {
		if d >= base && d < 2*base {
			return fmt.Sprintf("after backoff step %d: %v ≤ wait < %v", step, base, 2*base)
		}
		base = min(2*base, backoffMax)
	}
	return fmt.Sprintf("after %v, within no backoff step", d)
}
