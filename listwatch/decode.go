package listwatch

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	jsonserializer "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeinternals/informers/internal/objects"
	"github.com/kubeinternals/informers/reflector"
)

// Media types a ListerWatcher asks for. We send exactly one in Accept, so we know how
// the response is framed without reading its Content-Type (rest.Request.Stream does
// not return the response headers).
const (
	mediaTypeJSON     = runtime.ContentTypeJSON
	mediaTypeProtobuf = runtime.ContentTypeProtobuf
)

// maxFrameBytes bounds one watch event. A larger frame is drained and skipped.
//
// client-go: apimachinery/pkg/runtime/serializer/streaming/streaming.go NewDecoder
const maxFrameBytes = 16 << 20

// ErrWrongType is wrapped by the DecodeError of a watch event whose object decoded
// to another Go type than the ListerWatcher's T (the server sent another kind).
var ErrWrongType = errors.New("object has the wrong type")

// DecodeError describes one watch event that was logged and skipped because its
// object could not be decoded into T. The watch continues after it.
type DecodeError struct {
	// EventType is the event's type, or "" when the envelope itself was unreadable.
	EventType watch.EventType
	// Key is namespace/name (or name) recovered from the raw bytes, "" if unknown.
	Key string
	// Err is the cause.
	Err error
}

func (e *DecodeError) Error() string {
	key := e.Key
	if key == "" {
		key = "<unknown>"
	}
	return fmt.Sprintf("skipping undecodable %s watch event for %s: %v", e.EventType, key, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// codec turns LIST bodies and watch frames into T. It is immutable after construction
// and safe for concurrent use.
type codec[T reflector.Object] struct {
	// listAccept and watchAccept are the Accept headers of a LIST and of a WATCH:
	// one media type each, the same for typed and unstructured objects; for
	// metadata-only objects they name the kind the server converts to (metadata.go).
	listAccept, watchAccept string
	protobuf                bool
	objects                 runtime.Decoder // decodes one object or one list
	framer                  runtime.Framer  // splits a watch stream into frames
	newObject               func() T        // an empty T to decode into
	newList                 func() runtime.Object
	// fast, if set, decodes protobuf objects and lists of T's kind without copying
	// their bytes (protoenvelope.go); nil for JSON and for types without generated
	// Unmarshal methods.
	fast *fastDecoder
}

// newTypedCodec builds the codec for a Go type registered in scheme (e.g.
// *corev1.ConfigMap), in JSON or protobuf. It checks that T and T's list kind are
// registered for gv, so that a mistake shows up at construction, not on the wire.
func newTypedCodec[T reflector.Object](scheme *runtime.Scheme, gv schema.GroupVersion, protobuf bool) (*codec[T], error) {
	elem, err := pointerElem[T]()
	if err != nil {
		return nil, err
	}
	if _, isUnstructured := any(reflect.New(elem).Interface()).(*unstructured.Unstructured); isUnstructured {
		return nil, fmt.Errorf("%w: *unstructured.Unstructured needs a nil Scheme", ErrInvalidOptions)
	}
	newObject := func() T { return reflect.New(elem).Interface().(T) }
	gvks, _, err := scheme.ObjectKinds(newObject())
	if err != nil {
		return nil, fmt.Errorf("%w: %v is not in the scheme (add its group with NewScheme): %v", ErrInvalidOptions, reflect.PointerTo(elem), err)
	}
	var gvk schema.GroupVersionKind
	for _, k := range gvks {
		if k.GroupVersion() == gv {
			gvk = k
		}
	}
	if gvk.Empty() {
		return nil, fmt.Errorf("%w: %v is registered as %v, but the REST client is for %s", ErrInvalidOptions, reflect.PointerTo(elem), gvks, gv)
	}
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	if _, err := scheme.New(listGVK); err != nil {
		return nil, fmt.Errorf("%w: list kind %v is not in the scheme: %v", ErrInvalidOptions, listGVK, err)
	}
	mediaType, info, err := streamSerializer(scheme, protobuf)
	if err != nil {
		return nil, err
	}
	var fast *fastDecoder
	_, objectOK := any(newObject()).(unmarshaler)
	list, _ := scheme.New(listGVK)
	if _, listOK := list.(unmarshaler); protobuf && objectOK && listOK {
		fast = &fastDecoder{apiVersion: gv.String(), kind: gvk.Kind, listKind: listGVK.Kind, streamList: streamsList(list)}
	}
	return &codec[T]{
		fast:        fast,
		listAccept:  mediaType,
		watchAccept: mediaType,
		protobuf:    protobuf,
		// Why WithoutVersionDecoder: like client-go's typed clients, clear apiVersion
		// and kind on decoded typed objects; the Go type already says what they are.
		objects:   runtime.WithoutVersionDecoder{Decoder: info.Serializer},
		framer:    info.StreamSerializer.Framer,
		newObject: newObject,
		newList: func() runtime.Object {
			l, _ := scheme.New(listGVK) // checked above
			return l
		},
	}, nil
}

// streamSerializer returns the media type (JSON, or protobuf) and scheme's serializer
// for it, which must be able to stream (a watch is a stream of frames).
func streamSerializer(scheme *runtime.Scheme, protobuf bool) (string, runtime.SerializerInfo, error) {
	mediaType := mediaTypeJSON
	if protobuf {
		mediaType = mediaTypeProtobuf
	}
	info, ok := runtime.SerializerInfoForMediaType(serializer.NewCodecFactory(scheme).SupportedMediaTypes(), mediaType)
	if !ok || info.StreamSerializer == nil {
		return "", info, fmt.Errorf("%w: no streaming serializer for %s", ErrInvalidOptions, mediaType)
	}
	return mediaType, info, nil
}

// newUnstructuredCodec builds the JSON codec for *unstructured.Unstructured, which
// decodes any kind, including custom resources without Go types.
func newUnstructuredCodec[T reflector.Object]() (*codec[T], error) {
	var zero T
	if _, ok := any(zero).(*unstructured.Unstructured); !ok {
		return nil, fmt.Errorf("%w: a nil Scheme means *unstructured.Unstructured, not %T", ErrInvalidOptions, zero)
	}
	return &codec[T]{
		listAccept:  mediaTypeJSON,
		watchAccept: mediaTypeJSON,
		objects:     unstructured.UnstructuredJSONScheme,
		framer:      jsonserializer.Framer,
		newObject:   func() T { return any(&unstructured.Unstructured{}).(T) },
		newList:     func() runtime.Object { return &unstructured.UnstructuredList{} },
	}, nil
}

// pointerElem returns the struct type T points to, or an error if T is not a pointer.
func pointerElem[T any]() (reflect.Type, error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("%w: T must be a pointer to a struct, got %v", ErrInvalidOptions, t)
	}
	return t.Elem(), nil
}

// decodeList decodes one LIST response body. Each item is copied into its own
// allocation (meta.EachListItemWithAlloc), so no item keeps the page's Items array
// alive.
//
// client-go: tools/pager/pager.go ListPager.ListWithAlloc
func (c *codec[T]) decodeList(body []byte) (reflector.ListResult[T], error) {
	if c.fast != nil {
		list := c.newList()
		if ok, err := c.fast.decode(body, c.fast.listKind, list.(unmarshaler)); ok {
			if err != nil {
				return reflector.ListResult[T]{}, fmt.Errorf("decode list: %w", err)
			}
			return itemsOf[T](list)
		}
	}
	obj, _, err := c.objects.Decode(body, nil, c.newList())
	if err != nil {
		return reflector.ListResult[T]{}, fmt.Errorf("decode list: %w", err)
	}
	return itemsOf[T](obj)
}

// decodeEvent decodes one watch frame. A *DecodeError means "log and skip this
// event"; decodeEvent returns no other error.
func (c *codec[T]) decodeEvent(frame []byte) (reflector.Event[T], error) {
	var typ watch.EventType
	var raw []byte
	if c.protobuf {
		// The frame's fields as sub-slices: no copy of the object's bytes.
		t, object, err := unwrapWatchEvent(frame)
		if err != nil {
			return reflector.Event[T]{}, &DecodeError{Err: fmt.Errorf("decode watch event envelope: %w", err)}
		}
		typ, raw = eventType(t), object
	} else {
		var we metav1.WatchEvent
		if err := json.Unmarshal(frame, &we); err != nil {
			return reflector.Event[T]{}, &DecodeError{Err: fmt.Errorf("decode watch event envelope: %w", err)}
		}
		typ, raw = watch.EventType(we.Type), we.Object.Raw
	}
	switch typ {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
		obj, err := c.decodeObject(raw)
		if err != nil {
			return reflector.Event[T]{}, &DecodeError{EventType: typ, Key: c.recoverKey(raw), Err: err}
		}
		return reflector.Event[T]{Type: typ, Object: obj}, nil
	case watch.Error:
		return reflector.Event[T]{Type: typ, Status: c.decodeStatus(raw)}, nil
	default:
		return reflector.Event[T]{}, &DecodeError{EventType: typ, Key: c.recoverKey(raw), Err: fmt.Errorf("unknown watch event type %q", typ)}
	}
}

// eventType converts a watch event's type without allocating for the known ones.
func eventType(b []byte) watch.EventType {
	for _, t := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error} {
		if string(b) == string(t) {
			return t
		}
	}
	return watch.EventType(b)
}

// decodeObject decodes raw into a fresh T.
func (c *codec[T]) decodeObject(raw []byte) (T, error) {
	var zero T
	if len(raw) == 0 {
		return zero, errors.New("event has no object")
	}
	if c.fast != nil {
		obj := c.newObject()
		if ok, err := c.fast.decode(raw, c.fast.kind, any(obj).(unmarshaler)); ok {
			if err != nil {
				return zero, err
			}
			return obj, nil
		}
	}
	obj, _, err := c.objects.Decode(raw, nil, c.newObject())
	if err != nil {
		return zero, err
	}
	t, ok := obj.(T)
	if !ok || objects.IsNil(t) {
		return zero, fmt.Errorf("%w: got %T, want %T", ErrWrongType, obj, zero)
	}
	return t, nil
}

// decodeStatus decodes the object of an Error event. If that fails it still returns a
// status — a 500 InternalError naming the cause — so the watch ends with an error
// either way.
func (c *codec[T]) decodeStatus(raw []byte) *metav1.Status {
	status := &metav1.Status{}
	var err error
	if c.protobuf {
		_, _, err = c.objects.Decode(raw, nil, status)
	} else {
		err = json.Unmarshal(raw, status)
	}
	if err != nil || status.Status == "" && status.Code == 0 && status.Reason == "" {
		return undecodableStatus(fmt.Errorf("unable to decode the status of a watch error event: %v", err))
	}
	return status
}

// undecodableStatus is the status we report when a stream breaks or an error event
// is unreadable: 500 InternalError, as client-go's stream watcher reports it.
//
// client-go: rest/request.go Request.newStreamWatcher (NewClientErrorReporter)
func undecodableStatus(err error) *metav1.Status {
	return &metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusInternalServerError,
		Reason:  metav1.StatusReasonInternalError,
		Message: err.Error(),
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: "ClientWatchDecoding", Message: err.Error()}}},
	}
}

// protobufMagic prefixes every Kubernetes protobuf object ("k8s" and a zero byte).
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// recoverKey reads namespace and name from raw object bytes that did not decode into
// T, so the log line names the object. It never fails; "" means unknown.
func (c *codec[T]) recoverKey(raw []byte) string {
	var ns, name string
	if c.protobuf {
		ns, name = protobufObjectName(raw)
	} else {
		var probe struct {
			Metadata struct {
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(raw, &probe) // best effort: a type error elsewhere still fills these
		ns, name = probe.Metadata.Namespace, probe.Metadata.Name
	}
	if name == "" {
		return ""
	}
	return objects.Key(ns, name)
}

// protobufObjectName finds namespace and name in a protobuf-encoded object.
//
// Why it works for any kind: every Kubernetes object is wrapped in a runtime.Unknown
// behind a 4-byte magic, and every kind's field 1 is its ObjectMeta. We read only
// that first field, so a corrupt field after it does not hide the name.
func protobufObjectName(raw []byte) (namespace, name string) {
	env, err := unwrapEnvelope(raw)
	if err != nil {
		return "", ""
	}
	b := env.raw
	tag, n := binary.Uvarint(b)
	if n <= 0 || tag != 1<<3|2 { // field 1, length-delimited
		return "", ""
	}
	b = b[n:]
	size, n := binary.Uvarint(b)
	if n <= 0 || size > uint64(len(b)-n) {
		return "", ""
	}
	var meta metav1.ObjectMeta
	if meta.Unmarshal(b[n:n+int(size)]) != nil {
		return "", ""
	}
	return meta.Namespace, meta.Name
}

// frameReader reads one watch frame at a time from a framer's reader, growing its
// buffer up to maxFrameBytes.
//
// client-go: apimachinery/pkg/runtime/serializer/streaming/streaming.go decoder.Decode
type frameReader struct {
	frames io.ReadCloser
	buf    []byte
	max    int
}

func newFrameReader(framer runtime.Framer, body io.ReadCloser) *frameReader {
	return &frameReader{frames: framer.NewFrameReader(body), buf: make([]byte, 4096), max: maxFrameBytes}
}

// errFrameTooLarge reports a frame above maxFrameBytes; the frame has been drained, so
// the next call reads the next frame.
var errFrameTooLarge = fmt.Errorf("watch event larger than %d bytes", maxFrameBytes)

// next returns the next frame. The slice is valid until the next call. io.EOF means
// the stream ended cleanly.
func (r *frameReader) next() ([]byte, error) {
	base := 0
	for {
		n, err := r.frames.Read(r.buf[base:])
		if errors.Is(err, io.ErrShortBuffer) {
			if n == 0 {
				return nil, fmt.Errorf("frame reader made no progress with a %d-byte buffer", len(r.buf))
			}
			base += n
			if len(r.buf) < r.max {
				r.buf = append(r.buf, make([]byte, len(r.buf))...)
				continue
			}
			// Drain the rest of the oversized frame, then report it.
			for errors.Is(err, io.ErrShortBuffer) {
				_, err = r.frames.Read(r.buf)
			}
			if err != nil {
				return nil, err
			}
			return nil, errFrameTooLarge
		}
		if err != nil {
			return nil, err
		}
		return r.buf[:base+n], nil
	}
}
