package events

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
)

// eventSink is a fake API server for events. It stores each POSTed Event and answers 201
// with it; it applies a PATCH to a stored Event and answers 200, or 404 if there is no
// such Event; or it answers with the status/body it was told to, or never (block).
type eventSink struct {
	block  bool   // wait for the request's context to end instead of answering
	status int    // answer this status with body, if non-zero
	body   string // the error body for status

	mu      sync.Mutex // guards everything below
	posted  []eventsv1.Event
	patches []eventsv1.Event // each PATCH body, decoded
	paths   []string
	stored  map[string]eventsv1.Event // by name
}

func (s *eventSink) RoundTrip(req *http.Request) (*http.Response, error) {
	if s.block {
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	raw, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	var ev eventsv1.Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paths = append(s.paths, req.Method+" "+req.URL.Path)
	if req.Method == http.MethodPatch {
		s.patches = append(s.patches, ev)
	} else {
		s.posted = append(s.posted, ev)
	}

	status, body := http.StatusCreated, ""
	switch {
	case s.status != 0:
		status, body = s.status, s.body
	case req.Method == http.MethodPatch:
		name := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
		stored, ok := s.stored[name]
		if !ok {
			status, body = http.StatusNotFound, `{"apiVersion":"v1","kind":"Status","status":"Failure","code":404,"reason":"NotFound","message":"events.events.k8s.io \"`+name+`\" not found"}`
			break
		}
		stored.Series = ev.Series
		stored.ResourceVersion = strconv.Itoa(100 + len(s.paths))
		s.stored[name] = stored
		status, body = http.StatusOK, mustJSON(stored)
	default:
		if ev.Name == "" {
			ev.Name = ev.GenerateName + "xyz12"
		}
		ev.ResourceVersion = "100"
		if s.stored == nil {
			s.stored = map[string]eventsv1.Event{}
		}
		s.stored[ev.Name] = ev
		body = mustJSON(ev)
	}
	return &http.Response{
		StatusCode: status,
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(strings.NewReader(body)),
		Request:    req,
	}, nil
}

func mustJSON(v any) string {
	out, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(out)
}

func (s *eventSink) events() []eventsv1.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]eventsv1.Event(nil), s.posted...)
}

func newTestRecorder(t *testing.T, sink *eventSink, opts Options) *Recorder {
	t.Helper()
	opts.HTTPClient = &http.Client{Transport: sink}
	r, err := NewRecorder(&rest.Config{Host: "https://apiserver.test"}, opts)
	require.NoError(t, err)
	return r
}

func pod() *corev1.Pod {
	// Note: no TypeMeta, as objects from a typed client or cache come.
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", UID: "uid-1", ResourceVersion: "17"}}
}

func TestRecordPostsAValidEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &eventSink{}
		r := newTestRecorder(t, sink, Options{ReportingController: "kubeinternals.io/test", ReportingInstance: "test-0"})

		stored, err := r.Record(t.Context(), pod(), TypeWarning, "ErrResourceExists", "Sync", "Resource \"web\" already exists")
		require.NoError(t, err)
		assert.Equal(t, "100", stored.ResourceVersion, "Record returns the Event as the server stored it")

		require.Equal(t, []string{"POST /apis/events.k8s.io/v1/namespaces/shop/events"}, sink.paths)
		got := sink.events()[0]
		assert.Equal(t, corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "shop", Name: "web-0", UID: "uid-1", ResourceVersion: "17"}, got.Regarding)
		assert.Equal(t, "shop", got.Namespace)
		assert.Equal(t, TypeWarning, got.Type)
		assert.Equal(t, "ErrResourceExists", got.Reason)
		assert.Equal(t, "Sync", got.Action)
		assert.Equal(t, `Resource "web" already exists`, got.Note)
		assert.Equal(t, "kubeinternals.io/test", got.ReportingController)
		assert.Equal(t, "test-0", got.ReportingInstance)
		assert.True(t, got.EventTime.Time.Equal(time.Now().Truncate(time.Microsecond)), "eventTime is now, at microsecond precision")
		assert.True(t, strings.HasPrefix(got.Name, "web-0."), got.Name)
		assert.Empty(t, got.GenerateName)
	})
}

func TestEventNames(t *testing.T) {
	t.Run("the name is the object's name and the event time in hex nanoseconds", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &eventSink{}
			r := newTestRecorder(t, sink, Options{})
			_, err := r.Record(t.Context(), pod(), TypeNormal, "Synced", "Sync", "ok")
			require.NoError(t, err)
			assert.Equal(t, "web-0."+hexNano(time.Now().UnixNano()), sink.events()[0].Name)
		})
	})
	t.Run("two events in the same clock tick get different names", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &eventSink{}
			r := newTestRecorder(t, sink, Options{})
			for i := range 3 {
				// Different notes: a repeat of the same event would PATCH, not POST.
				_, err := r.Record(t.Context(), pod(), TypeNormal, "Synced", "Sync", "pass "+strconv.Itoa(i))
				require.NoError(t, err)
			}
			evs := sink.events()
			require.Len(t, evs, 3)
			now := time.Now().UnixNano()
			assert.Equal(t, []string{"web-0." + hexNano(now), "web-0." + hexNano(now+1), "web-0." + hexNano(now+2)},
				[]string{evs[0].Name, evs[1].Name, evs[2].Name})
		})
	})
	t.Run("an object name too long for an event name makes the server generate one", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &eventSink{}
			r := newTestRecorder(t, sink, Options{})
			long := pod()
			long.Name = strings.Repeat("a", 250)
			stored, err := r.Record(t.Context(), long, TypeNormal, "Synced", "Sync", "ok")
			require.NoError(t, err)
			got := sink.events()[0]
			assert.Empty(t, got.Name)
			assert.Equal(t, "event.", got.GenerateName)
			assert.Empty(t, validation.IsDNS1123Subdomain(stored.Name))
		})
	})
}

// hexNano renders Unix nanoseconds the way Event names carry them.
func hexNano(n int64) string { return strconv.FormatInt(n, 16) }

func TestRegardingReferences(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "n"}}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "shop"}}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("samplecontroller.k8s.io/v1alpha1")
	u.SetKind("Foo")
	u.SetName("example-foo")
	u.SetNamespace("shop")
	ref := &corev1.ObjectReference{Kind: "Widget", APIVersion: "example.com/v1", Name: "w", Namespace: "shop"}

	for _, tt := range []struct {
		name          string
		run           func(r *Recorder, ctx context.Context) error
		wantKind      string
		wantAPI       string
		wantNamespace string
	}{
		{"a cluster-scoped object's event goes to the default namespace",
			func(r *Recorder, ctx context.Context) error {
				_, err := r.Record(ctx, node, TypeNormal, "R", "A", "n")
				return err
			}, "Node", "v1", "default"},
		{"an apps/v1 object's kind comes from the default scheme",
			func(r *Recorder, ctx context.Context) error {
				_, err := r.Record(ctx, dep, TypeNormal, "R", "A", "n")
				return err
			}, "Deployment", "apps/v1", "shop"},
		{"an object that carries its kind needs no scheme entry",
			func(r *Recorder, ctx context.Context) error {
				_, err := r.Record(ctx, u, TypeNormal, "R", "A", "n")
				return err
			}, "Foo", "samplecontroller.k8s.io/v1alpha1", "shop"},
		{"an ObjectReference is used as it is",
			func(r *Recorder, ctx context.Context) error {
				_, err := r.Record(ctx, ref, TypeNormal, "R", "A", "n")
				return err
			}, "Widget", "example.com/v1", "shop"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sink := &eventSink{}
				r := newTestRecorder(t, sink, Options{})
				require.NoError(t, tt.run(r, t.Context()))
				got := sink.events()[0]
				assert.Equal(t, tt.wantKind, got.Regarding.Kind)
				assert.Equal(t, tt.wantAPI, got.Regarding.APIVersion)
				assert.Equal(t, tt.wantNamespace, got.Namespace)
			})
		})
	}
}

func TestBadInputIsRefusedBeforeAnyRequest(t *testing.T) {
	var nilPod *corev1.Pod
	tests := []struct {
		name                string
		obj                 runtime.Object
		typ, reason, action string
		wantText            string
	}{
		{"a type other than Normal or Warning is refused", pod(), "Error", "R", "A", `type "Error"`},
		{"an empty reason is refused", pod(), TypeNormal, "", "A", "reason must be"},
		{"a reason over 128 bytes is refused", pod(), TypeNormal, strings.Repeat("r", 129), "A", "reason must be"},
		{"an empty action is refused", pod(), TypeNormal, "R", "", "action must be"},
		{"an action over 128 bytes is refused", pod(), TypeNormal, "R", strings.Repeat("a", 129), "action must be"},
		{"a nil object is refused", nil, TypeNormal, "R", "A", "nil object"},
		{"a typed nil object is refused", nilPod, TypeNormal, "R", "A", "nil object"},
		{"an object whose kind the scheme does not know is refused", &eventsv1.Event{}, TypeNormal, "R", "A", "add its AddToScheme"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &eventSink{}
			r := newTestRecorder(t, sink, Options{})
			_, err := r.Record(context.Background(), tt.obj, tt.typ, tt.reason, tt.action, "n")
			require.ErrorIs(t, err, ErrInvalidEvent)
			assert.Contains(t, err.Error(), tt.wantText)
			assert.Empty(t, sink.events())
		})
	}
	t.Run("a nil config is refused", func(t *testing.T) {
		_, err := NewRecorder(nil, Options{})
		require.Error(t, err)
	})
}

func TestLongNotesAreCutAtARuneBoundary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &eventSink{}
		r := newTestRecorder(t, sink, Options{})
		note := strings.Repeat("a", 1023) + "é and more" // é is two bytes: bytes 1023 and 1024
		_, err := r.Record(t.Context(), pod(), TypeNormal, "R", "A", note)
		require.NoError(t, err)
		got := sink.events()[0].Note
		assert.Equal(t, strings.Repeat("a", 1023), got)
		assert.True(t, utf8.ValidString(got))

		short := "exactly as given"
		_, err = r.Record(t.Context(), pod(), TypeNormal, "R", "A", short)
		require.NoError(t, err)
		assert.Equal(t, short, sink.events()[1].Note)
	})
}

func TestTimeoutBoundsTheCall(t *testing.T) {
	t.Run("Record gives up after Options.Timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newTestRecorder(t, &eventSink{block: true}, Options{Timeout: 2 * time.Second})
			start := time.Now()
			_, err := r.Record(t.Context(), pod(), TypeNormal, "R", "A", "n")
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Equal(t, 2*time.Second, time.Since(start))
		})
	})
	t.Run("the zero Timeout means 5s", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newTestRecorder(t, &eventSink{block: true}, Options{})
			start := time.Now()
			_, err := r.Record(t.Context(), pod(), TypeNormal, "R", "A", "n")
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Equal(t, 5*time.Second, time.Since(start))
		})
	})
	t.Run("Eventf returns after the timeout and logs the failure", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			r := newTestRecorder(t, &eventSink{block: true}, Options{Timeout: time.Second, Logger: log})
			start := time.Now()
			r.Eventf(t.Context(), pod(), TypeWarning, "Failed", "Sync", "tried %d times", 3)
			assert.Equal(t, time.Second, time.Since(start))
			assert.Contains(t, logs.String(), "event not recorded")
			assert.Contains(t, logs.String(), `note="tried 3 times"`)
			assert.Contains(t, logs.String(), "deadline exceeded")
		})
	})
}

func TestEventf(t *testing.T) {
	t.Run("the note is formatted with the arguments", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &eventSink{}
			r := newTestRecorder(t, sink, Options{})
			r.Eventf(t.Context(), pod(), TypeNormal, "Synced", "Sync", "scaled %s to %d", "web", 3)
			assert.Equal(t, "scaled web to 3", sink.events()[0].Note)
		})
	})
	t.Run("the note is a format even without arguments, so %% is a percent sign", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &eventSink{}
			r := newTestRecorder(t, sink, Options{})
			r.Eventf(t.Context(), pod(), TypeNormal, "Synced", "Sync", "100%% done")
			assert.Equal(t, "100% done", sink.events()[0].Note)
		})
	})
	t.Run("a server error is logged with its reason, not returned", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var logs bytes.Buffer
			sink := &eventSink{status: http.StatusForbidden,
				body: `{"apiVersion":"v1","kind":"Status","status":"Failure","code":403,"reason":"Forbidden","message":"events.events.k8s.io is forbidden"}`}
			r := newTestRecorder(t, sink, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			r.Eventf(t.Context(), pod(), TypeNormal, "Synced", "Sync", "ok")
			assert.Contains(t, logs.String(), "level=WARN")
			assert.Contains(t, logs.String(), "is forbidden")
		})
	})
	t.Run("invalid input is logged, not returned", func(t *testing.T) {
		var logs bytes.Buffer
		sink := &eventSink{}
		r := newTestRecorder(t, sink, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		r.Eventf(context.Background(), pod(), "Info", "R", "A", "n")
		assert.Contains(t, logs.String(), "invalid event")
		assert.Empty(t, sink.events())
	})
	t.Run("a successful event is logged at debug", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var logs bytes.Buffer
			r := newTestRecorder(t, &eventSink{}, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			r.Eventf(t.Context(), pod(), TypeNormal, "Synced", "Sync", "ok")
			assert.Contains(t, logs.String(), "level=DEBUG msg=\"event recorded\" event=shop/web-0.")
		})
	})
}

func TestRecordReturnsServerErrorsAsStatusErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &eventSink{status: http.StatusUnprocessableEntity,
			body: `{"apiVersion":"v1","kind":"Status","status":"Failure","code":422,"reason":"Invalid","message":"bad"}`}
		r := newTestRecorder(t, sink, Options{})
		_, err := r.Record(t.Context(), pod(), TypeNormal, "R", "A", "n")
		assert.True(t, apierrors.IsInvalid(err), "%v", err)
	})
}

func TestDefaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &eventSink{}
		r := newTestRecorder(t, sink, Options{})
		_, err := r.Record(t.Context(), pod(), TypeNormal, "R", "A", "n")
		require.NoError(t, err)
		host, err := os.Hostname()
		require.NoError(t, err)
		got := sink.events()[0]
		assert.Equal(t, "kubeinternals.io/examples", got.ReportingController)
		assert.Equal(t, host, got.ReportingInstance)
	})
}
