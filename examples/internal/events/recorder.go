package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/kube"
)

// The two event types the API accepts.
const (
	TypeNormal  = corev1.EventTypeNormal
	TypeWarning = corev1.EventTypeWarning
)

// ErrInvalidEvent is returned (wrapped) when an event cannot be built from the arguments:
// nil object, unknown kind, bad type, missing or too long reason or action.
var ErrInvalidEvent = errors.New("invalid event")

const (
	defaultTimeout             = 5 * time.Second
	defaultReportingController = "kubeinternals.io/examples"
)

// Options tunes NewRecorder. The zero value is ready to use.
type Options struct {
	// Scheme maps Go types to kinds. Why it is needed: objects decoded by a typed client
	// or read from a cache have an empty apiVersion/kind, so the Event's "regarding"
	// reference must look the kind up. nil means a scheme with core/v1 and apps/v1; add
	// your own types (v1alpha1.AddToScheme) to record events about them.
	Scheme *runtime.Scheme
	// ReportingController names the controller, as a qualified name such as
	// "kubeinternals.io/foo-controller". "" means "kubeinternals.io/examples".
	ReportingController string
	// ReportingInstance names this copy of the controller (at most 128 bytes).
	// "" means the host name (the pod name, in a pod).
	ReportingInstance string
	// Timeout bounds one Record: the wait for an earlier write of the same event, and
	// the requests. 0 means 5s.
	Timeout time.Duration
	// Logger receives failed events at Warn and written ones at Debug. Nil means slog.Default().
	Logger *slog.Logger
	// HTTPClient carries the requests; nil means rest.HTTPClientFor(cfg).
	HTTPClient *http.Client
}

// Recorder writes Events, counting repeats of one event on one Event. It is safe for
// concurrent use.
type Recorder struct {
	rest    rest.Interface
	scheme  *runtime.Scheme
	log     *slog.Logger
	timeout time.Duration
	// controller and instance fill reportingController and reportingInstance.
	controller, instance string

	mu       sync.Mutex // guards lastNano
	lastNano int64      // the nanosecond stamp of the last event name; guarded by mu

	series *seriesCache // the Events written so far, by key, for counting repeats
}

// NewRecorder returns a Recorder writing through cfg (which is copied, not modified).
func NewRecorder(cfg *rest.Config, opts Options) (*Recorder, error) {
	if cfg == nil {
		return nil, errors.New("events: nil *rest.Config")
	}
	r := &Recorder{
		scheme:     opts.Scheme,
		log:        opts.Logger,
		timeout:    opts.Timeout,
		controller: opts.ReportingController,
		instance:   opts.ReportingInstance,
		series:     newSeriesCache(seriesCacheSize),
	}
	if r.scheme == nil {
		r.scheme = runtime.NewScheme()
		for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme} {
			if err := add(r.scheme); err != nil {
				return nil, fmt.Errorf("events: default scheme: %w", err)
			}
		}
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.timeout <= 0 {
		r.timeout = defaultTimeout
	}
	if r.controller == "" {
		r.controller = defaultReportingController
	}
	if r.instance == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = r.controller
		}
		r.instance = host
	}

	rc, _, err := kube.NewRESTClient(cfg, eventsv1.SchemeGroupVersion, opts.HTTPClient, eventsv1.AddToScheme)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	r.rest = rc
	return r, nil
}

// Eventf records an event about regarding: eventType is TypeNormal or TypeWarning, reason
// a short CamelCase word ("ErrResourceExists"), action what the controller did or tried
// ("Sync"), and the note is noteFormat formatted with args. Repeats are counted on one
// Event, as Record says. It returns within Options.Timeout; a failure is logged, never
// returned.
//
// client-go: tools/events/event_recorder.go recorderImpl.Eventf
func (r *Recorder) Eventf(ctx context.Context, regarding runtime.Object, eventType, reason, action, noteFormat string, args ...any) {
	// Pitfall: the note is always a format, as with fmt.Printf: write %% for a percent
	// sign (go vet checks Eventf calls like Printf calls).
	note := fmt.Sprintf(noteFormat, args...)
	ev, err := r.Record(ctx, regarding, eventType, reason, action, note)
	if err != nil {
		r.log.Warn("event not recorded", "type", eventType, "reason", reason, "note", note, "err", err)
		return
	}
	count := int32(1)
	if ev.Series != nil {
		count = ev.Series.Count
	}
	r.log.Debug("event recorded", "event", ev.Namespace+"/"+ev.Name, "type", eventType, "reason", reason, "count", count)
}

// Record writes one occurrence of an event and returns the Event as stored, or the
// error; it returns within Options.Timeout. The first occurrence is POSTed as a new
// Event; a repeat (same object, type, reason, action and note) at most 6 minutes after
// the previous one PATCHes that Event's series.count and series.lastObservedTime
// instead. Eventf is Record with the error logged.
//
// client-go: tools/events/event_broadcaster.go eventBroadcasterImpl.recordToSink
func (r *Recorder) Record(ctx context.Context, regarding runtime.Object, eventType, reason, action, note string) (*eventsv1.Event, error) {
	now := time.Now()
	ev, err := r.build(now, regarding, eventType, reason, action, note)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()

	s := r.series.observe(keyOf(ev), now)
	// Why one writer per series: two workers repeating the same event at once would
	// both see "no Event yet" and POST two. The second waits for the first, then
	// PATCHes what it created. Pitfall: the wait counts against this call's timeout,
	// so Record still returns within Options.Timeout.
	select {
	case s.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, r.failed(ev, "wait for the previous write of", ctx.Err())
	}
	defer func() { <-s.lock }()
	s.count++

	if s.name != "" {
		out, err := r.patchSeries(ctx, s, now)
		if err == nil {
			return out, nil
		}
		// Why create again on NotFound: the Event expired (the apiserver's
		// --event-ttl, 1h by default) or someone deleted it. The occurrence is still
		// worth recording, with the count so far.
		// client-go: tools/events/event_broadcaster.go recordEvent
		if !apierrors.IsNotFound(err) {
			return nil, r.failed(ev, "patch", err)
		}
		s.name = ""
	}
	if s.count > 1 {
		// A series whose Event is gone, or whose first POST failed: the new Event
		// starts at the first observation and carries the count so far.
		ev.EventTime = metav1.NewMicroTime(s.first)
		ev.Series = &eventsv1.EventSeries{Count: s.count, LastObservedTime: metav1.NewMicroTime(now)}
	}
	out := &eventsv1.Event{}
	if err := r.rest.Post().Namespace(ev.Namespace).Resource("events").Body(ev).Do(ctx).Into(out); err != nil {
		return nil, r.failed(ev, "post", err)
	}
	s.namespace, s.name = out.Namespace, out.Name
	return out, nil
}

// patchSeries sets the stored Event's series to s.count occurrences, the last at now.
//
// Why a merge patch of series alone: series is what changes (events.k8s.io/v1 makes the
// note, reason, type and regarding object immutable), and a patch needs no
// resourceVersion, so no read comes first.
//
// client-go: tools/events/event_broadcaster.go createPatchBytesForSeries
func (r *Recorder) patchSeries(ctx context.Context, s *series, now time.Time) (*eventsv1.Event, error) {
	body, err := json.Marshal(map[string]eventsv1.EventSeries{
		"series": {Count: s.count, LastObservedTime: metav1.NewMicroTime(now)},
	})
	if err != nil {
		return nil, err
	}
	out := &eventsv1.Event{}
	err = r.rest.Patch(types.MergePatchType).Namespace(s.namespace).Resource("events").Name(s.name).
		Body(body).Do(ctx).Into(out)
	return out, err
}

// failed wraps err with what was being written about which object.
func (r *Recorder) failed(ev *eventsv1.Event, verb string, err error) error {
	return fmt.Errorf("events: %s %s %s about %s %s/%s: %w",
		verb, ev.Type, ev.Reason, ev.Regarding.Kind, ev.Regarding.Namespace, ev.Regarding.Name, err)
}
