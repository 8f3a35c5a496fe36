package reflector

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeinternals/informers/internal/objects"
	"github.com/kubeinternals/informers/trace"
)

// emit reports e as this reflector's (Stage and Source filled in). Callers check
// r.opts.Tracer != nil first, so that no Event is built when tracing is off.
func (r *Reflector[T]) emit(e trace.Event) {
	e.Stage, e.Source = trace.Reflector, r.name
	r.opts.Tracer.Emit(e)
}

// traceWhy names, for the trace, the error that ends a watch or forces a relist —
// the same classes the state machine in doc.go tells apart.
func traceWhy(err error) string {
	switch {
	case err == nil:
		return "the stream ended without an error (the server's timeout, or the connection closed on the way)"
	case errors.Is(err, errStopRequested):
		return "the context ended"
	case isExpiredError(err):
		return "410 Gone: the resource version is too old (compacted in etcd, or gone from the watch cache)"
	case isTooLargeResourceVersionError(err):
		return "the resource version is newer than the server has"
	case errors.Is(err, ErrVeryShortWatch):
		return "very short watch: closed within a second with no events"
	case utilnet.IsConnectionRefused(err):
		return "connection refused: the apiserver is unreachable"
	case apierrors.IsTooManyRequests(err):
		return "429 Too Many Requests"
	default:
		return fmt.Sprintf("error: %v", err)
	}
}

// traceEvent reports one watch event (trace.WatchEvent), or a bookmark
// (trace.Bookmark), before the store takes it.
func (r *Reflector[T]) traceEvent(t watch.EventType, meta eventMeta) {
	if t == watch.Bookmark {
		r.emit(trace.Event{Kind: trace.Bookmark, ResourceVersion: meta.resourceVersion})
		return
	}
	r.emit(trace.Event{Kind: trace.WatchEvent, Type: string(t), Key: objects.Key(meta.namespace, meta.name),
		ResourceVersion: meta.resourceVersion})
}
