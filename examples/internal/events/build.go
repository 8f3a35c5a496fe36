package events

import (
	"fmt"
	"reflect"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Limits enforced by events.k8s.io/v1 validation.
const (
	maxReasonLen = 128
	maxActionLen = 128
	maxNoteLen   = 1024
)

// build turns the arguments into an Event ready to POST, or ErrInvalidEvent.
//
// client-go: tools/events/event_recorder.go recorderImpl.makeEvent
func (r *Recorder) build(now time.Time, regarding runtime.Object, eventType, reason, action, note string) (*eventsv1.Event, error) {
	if eventType != TypeNormal && eventType != TypeWarning {
		return nil, fmt.Errorf("%w: type %q, want %s or %s", ErrInvalidEvent, eventType, TypeNormal, TypeWarning)
	}
	if reason == "" || len(reason) > maxReasonLen {
		return nil, fmt.Errorf("%w: reason must be 1..%d bytes, got %d", ErrInvalidEvent, maxReasonLen, len(reason))
	}
	if action == "" || len(action) > maxActionLen {
		return nil, fmt.Errorf("%w: action must be 1..%d bytes, got %d", ErrInvalidEvent, maxActionLen, len(action))
	}
	ref, err := reference(r.scheme, regarding)
	if err != nil {
		return nil, err
	}

	// Why "default" for a cluster-scoped object (a Node, a Namespace): an Event is itself
	// namespaced, and validation accepts only default or kube-system for those.
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Namespace: ns},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Note:                truncate(note, maxNoteLen),
		Type:                eventType,
	}
	name := fmt.Sprintf("%s.%x", ref.Name, r.nextNano(now))
	if len(validation.IsDNS1123Subdomain(name)) == 0 {
		ev.Name = name
	} else {
		ev.GenerateName = "event."
	}
	return ev, nil
}

// nextNano returns now in Unix nanoseconds, bumped past the previous call's value.
//
// Why: Event names are "<object>.<hex nanoseconds>". On a coarse clock (or a frozen test
// clock) two events about one object in the same tick would get the same name and the
// second POST would fail with AlreadyExists.
//
// client-go: tools/record/util/util.go GenerateEventName (names only; the bump is ours)
func (r *Recorder) nextNano(now time.Time) int64 {
	n := now.UnixNano()
	r.mu.Lock()
	defer r.mu.Unlock()
	if n <= r.lastNano {
		n = r.lastNano + 1
	}
	r.lastNano = n
	return n
}

// reference describes obj for the Event's regarding field.
//
// Pitfall: objects from a typed client or a cache have an empty apiVersion/kind (the
// decoder drops them), so the kind comes from the scheme; an object that carries its
// kind (unstructured, or one you built with TypeMeta) is used as it is.
//
// client-go: tools/reference/ref.go GetReference
func reference(scheme *runtime.Scheme, obj runtime.Object) (*corev1.ObjectReference, error) {
	if obj == nil || (reflect.ValueOf(obj).Kind() == reflect.Pointer && reflect.ValueOf(obj).IsNil()) {
		return nil, fmt.Errorf("%w: nil object", ErrInvalidEvent)
	}
	if ref, ok := obj.(*corev1.ObjectReference); ok {
		return ref.DeepCopy(), nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("%w: %T has no object metadata: %w", ErrInvalidEvent, obj, err)
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		gvks, _, err := scheme.ObjectKinds(obj)
		if err != nil {
			return nil, fmt.Errorf("%w: kind of %T: %w (add its AddToScheme to Options.Scheme)", ErrInvalidEvent, obj, err)
		}
		gvk = gvks[0]
	}
	return &corev1.ObjectReference{
		Kind:            gvk.Kind,
		APIVersion:      gvk.GroupVersion().String(),
		Namespace:       m.GetNamespace(),
		Name:            m.GetName(),
		UID:             m.GetUID(),
		ResourceVersion: m.GetResourceVersion(),
	}, nil
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// s[n] is the first byte dropped; if it continues a rune, that rune starts earlier
	// and must go too.
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
