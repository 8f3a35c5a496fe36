package listwatch

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// The Kubernetes protobuf wire format wraps every object (and list) in an envelope:
// the 4-byte magic "k8s\x00", then a runtime.Unknown message whose field 1 is the
// TypeMeta (apiVersion, kind), field 2 the object's own protobuf bytes, and fields 3
// and 4 a content encoding and type (empty in practice). A watch frame is a
// metav1.WatchEvent message — field 1 the event type, field 2 a RawExtension whose
// field 1 holds an enveloped object.
//
// apimachinery's serializer unmarshals each of those wrappers into a Go struct, and
// gogo-protobuf copies every bytes field it unmarshals: a watch event's object bytes
// are copied twice (into RawExtension.Raw, then into Unknown.Raw) before the object
// itself is decoded, and a LIST body once. These functions find the same fields as
// sub-slices of the input instead, so the object is decoded straight from the frame
// or the response body: no copy of the wire bytes, and no garbage for the collector.
//
// Why it is safe to decode from a buffer that is reused afterwards: the generated
// Unmarshal methods of Kubernetes types copy every string, bytes and map value they
// read; a decoded object never aliases its input.
//
// client-go: apimachinery/pkg/runtime/serializer/protobuf/protobuf.go Serializer.Decode
// (the same envelope, unwrapped by unmarshalling runtime.Unknown)

var errMalformedProtobuf = errors.New("malformed protobuf")

// envelope is the parts of a runtime.Unknown the fast path needs, as sub-slices of
// its input.
type envelope struct {
	apiVersion, kind []byte
	raw              []byte
	// encoded is true when the envelope names a content encoding or type: the fast
	// path then leaves the object to the serializer.
	encoded bool
}

// unwrapEnvelope reads the envelope of an enveloped object without copying it.
func unwrapEnvelope(data []byte) (envelope, error) {
	var env envelope
	if !bytes.HasPrefix(data, protobufMagic) {
		return env, errMalformedProtobuf
	}
	err := eachField(data[len(protobufMagic):], func(num int, v []byte) error {
		switch num {
		case 1: // TypeMeta
			return eachField(v, func(num int, v []byte) error {
				switch num {
				case 1:
					env.apiVersion = v
				case 2:
					env.kind = v
				}
				return nil
			})
		case 2:
			env.raw = v
		case 3, 4:
			env.encoded = env.encoded || len(v) > 0
		}
		return nil
	})
	return env, err
}

// unwrapWatchEvent reads a protobuf watch frame (a metav1.WatchEvent) without copying
// it: the event type and the enveloped object.
func unwrapWatchEvent(frame []byte) (typ, object []byte, err error) {
	err = eachField(frame, func(num int, v []byte) error {
		switch num {
		case 1:
			typ = v
		case 2: // RawExtension
			return eachField(v, func(num int, v []byte) error {
				if num == 1 {
					object = v
				}
				return nil
			})
		}
		return nil
	})
	return typ, object, err
}

// eachField calls f with the number and value of every length-delimited field of a
// protobuf message, in order, and skips varint and fixed-width fields; the values are
// sub-slices of msg. Malformed input is an error, never a panic.
func eachField(msg []byte, f func(num int, v []byte) error) error {
	for len(msg) > 0 {
		tag, n := binary.Uvarint(msg)
		if n <= 0 {
			return errMalformedProtobuf
		}
		msg = msg[n:]
		num, wireType := tag>>3, tag&7
		if num == 0 || num > 1<<29-1 {
			return errMalformedProtobuf
		}
		switch wireType {
		case 0: // varint
			_, n := binary.Uvarint(msg)
			if n <= 0 {
				return errMalformedProtobuf
			}
			msg = msg[n:]
		case 1: // 64-bit
			if len(msg) < 8 {
				return errMalformedProtobuf
			}
			msg = msg[8:]
		case 5: // 32-bit
			if len(msg) < 4 {
				return errMalformedProtobuf
			}
			msg = msg[4:]
		case 2: // length-delimited
			size, n := binary.Uvarint(msg)
			if n <= 0 || size > uint64(len(msg)-n) {
				return errMalformedProtobuf
			}
			v := msg[n : n+int(size)]
			msg = msg[n+int(size):]
			if err := f(int(num), v); err != nil {
				return err
			}
		default: // groups (3, 4) are not used by Kubernetes types
			return errMalformedProtobuf
		}
	}
	return nil
}

// unmarshaler is what the generated Go types of Kubernetes objects and lists have.
type unmarshaler interface {
	Unmarshal(data []byte) error
}

// fastDecoder decodes enveloped objects of one kind straight from their input, for
// the protobuf codecs of generated types. It is immutable and safe for concurrent use.
type fastDecoder struct {
	apiVersion string // e.g. "v1", "apps/v1"
	kind       string // e.g. "ConfigMap"
	listKind   string // e.g. "ConfigMapList"
	// streamList: the list type has the layout decodeListStream reads (streamsList).
	streamList bool
}

// decode unmarshals an enveloped object of d's kind into into, and reports false —
// having changed nothing — when the envelope is of another kind or encoded, or does
// not parse: the caller then lets the serializer decode it, for the same result or
// the same error as before.
func (d *fastDecoder) decode(data []byte, kind string, into unmarshaler) (bool, error) {
	env, err := unwrapEnvelope(data)
	if err != nil || env.encoded || string(env.kind) != kind || string(env.apiVersion) != d.apiVersion {
		return false, nil
	}
	return true, into.Unmarshal(env.raw)
}
