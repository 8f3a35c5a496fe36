package reflector

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// ErrInvalidOptions is wrapped by every error a constructor in this package returns
// for bad input.
var ErrInvalidOptions = errors.New("reflector: invalid options")

// ErrVeryShortWatch ends a watch that closed in under a second without delivering a
// single event. The reflector treats it as a failure and relists: a server that
// keeps closing watches at once is usually broken, and re-watching at the same
// resource version would spin.
//
// client-go: tools/cache/reflector.go VeryShortWatchError
var ErrVeryShortWatch = errors.New("very short watch: closed within a second with no events")

// errStopRequested ends a watch because the reflector's context was cancelled.
var errStopRequested = errors.New("stop requested")

// isExpiredError reports a 410: the resource version we asked for has been
// compacted away. Old servers said Gone, newer ones say Expired.
//
// client-go: tools/cache/reflector.go isExpiredError
func isExpiredError(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// isTooLargeResourceVersionError reports that we asked for a resource version newer
// than this API server has seen (e.g. after failing over to a lagging server).
//
// client-go: tools/cache/reflector.go isTooLargeResourceVersionError
func isTooLargeResourceVersionError(err error) bool {
	if apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		return true
	}
	// Servers 1.17.0–1.18.5 sent a Timeout with this message instead of the cause.
	var status apierrors.APIStatus
	if !apierrors.IsTimeout(err) || !errors.As(err, &status) {
		return false
	}
	s := status.Status()
	if strings.Contains(s.Message, "Too large resource version") {
		return true
	}
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Message == "Too large resource version" {
				return true
			}
		}
	}
	return false
}

// isWatchErrorRetriable reports errors after which re-watching from the same
// resource version (after a backoff) is better than relisting: the server was
// unreachable or asked us to slow down, and nothing says our RV is stale.
//
// client-go: tools/cache/reflector.go isWatchErrorRetriable
func isWatchErrorRetriable(err error) bool {
	return utilnet.IsConnectionRefused(err) || apierrors.IsTooManyRequests(err)
}

// statusError turns the status of a watch Error event into the error it stands for.
//
// client-go: tools/cache/reflector.go handleAnyWatch (apierrors.FromObject)
func statusError(s *metav1.Status) error {
	if s == nil {
		return fmt.Errorf("watch error event without a status")
	}
	return apierrors.FromObject(s)
}
