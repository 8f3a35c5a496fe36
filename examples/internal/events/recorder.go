package events

import (
	"context"
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
	"k8s.io/apimachinery/pkg/runtime"
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
	// Timeout bounds one POST. 0 means 5s.
	Timeout time.Duration
	// Logger receives failed events at Warn and posted ones at Debug. nil discards.
	Logger *slog.Logger
	// HTTPClient carries the requests; nil means rest.HTTPClientFor(cfg).
	HTTPClient *http.Client
}

// Recorder posts Events. It is safe for concurrent use.
type Recorder struct {
	rest    rest.Interface
	scheme  *runtime.Scheme
	log     *slog.Logger
	timeout time.Duration
	// controller and instance fill reportingController and reportingInstance.
	controller, instance string

	mu       sync.Mutex // guards lastNano
	lastNano int64      // the nanosecond stamp of the last event name; guarded by mu
}

// NewRecorder returns a Recorder posting through cfg (which is copied, not modified).
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
		r.log = slog.New(slog.DiscardHandler)
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
// ("Sync"), and the note is noteFormat formatted with args. It returns within
// Options.Timeout; a failure is logged, never returned.
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
	r.log.Debug("event recorded", "event", ev.Namespace+"/"+ev.Name, "type", eventType, "reason", reason)
}

// Record builds one Event, POSTs it, and returns the Event as stored, or the error. It
// returns within Options.Timeout. Eventf is Record with the error logged.
func (r *Recorder) Record(ctx context.Context, regarding runtime.Object, eventType, reason, action, note string) (*eventsv1.Event, error) {
	ev, err := r.build(time.Now(), regarding, eventType, reason, action, note)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	out := &eventsv1.Event{}
	err = r.rest.Post().Namespace(ev.Namespace).Resource("events").Body(ev).Do(ctx).Into(out)
	if err != nil {
		return nil, fmt.Errorf("events: post %s %s about %s %s/%s: %w",
			eventType, reason, ev.Regarding.Kind, ev.Regarding.Namespace, ev.Regarding.Name, err)
	}
	return out, nil
}
