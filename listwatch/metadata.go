package listwatch

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeinternals/informers/reflector"
)

// Metadata only: a RESTListerWatcher[*metav1.PartialObjectMetadata] lists and watches
// any resource — built-in, aggregated or custom — but receives only each object's
// metadata (name, namespace, uid, resourceVersion, labels, annotations, owner
// references, finalizers, managedFields…), never its spec or status.
//
// It asks by content negotiation, on the resource's own URL: the Accept header names
// the kind the apiserver is to convert each answer to, as parameters of the media
// type. A LIST asks for a PartialObjectMetadataList, a WATCH (a watch-list included)
// for one PartialObjectMetadata per event:
//
//	application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1
//	application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1
//
// The apiserver converts after it has read the objects (its watch cache holds them
// whole), so the saving is on the wire, in decoding, and in the client's cache. The
// two kinds are served in protobuf for every resource, custom resources too: the
// conversion, not the resource, decides what can be encoded.

// Media type parameters naming the metadata-only kinds.
const (
	asPartialObjectMetadataList = ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	asPartialObjectMetadata     = ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
)

// isMetadata reports whether T is *metav1.PartialObjectMetadata: the Go type asks
// for the metadata-only protocol.
func isMetadata[T any]() bool {
	_, ok := any(*new(T)).(*metav1.PartialObjectMetadata)
	return ok
}

// newMetadataCodec builds the codec of *metav1.PartialObjectMetadata, in JSON or
// protobuf. It needs no Scheme from the caller: the two kinds are meta.k8s.io/v1's.
//
// Differences from client-go: its metadata client sends both media types in each
// Accept header (protobuf, then JSON) and falls back to decoding a plain JSON list
// from servers older than 1.15; we send exactly one, as for every other codec.
//
// client-go: metadata/metadata.go client.List, client.Watch (the Accept headers)
func newMetadataCodec[T reflector.Object](protobuf bool) (*codec[T], error) {
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		return nil, fmt.Errorf("listwatch: register meta.k8s.io/v1: %w", err)
	}
	mediaType, info, err := streamSerializer(scheme, protobuf)
	if err != nil {
		return nil, err
	}
	var fast *fastDecoder
	if protobuf {
		fast = &fastDecoder{
			apiVersion: metav1.SchemeGroupVersion.String(), kind: "PartialObjectMetadata", listKind: "PartialObjectMetadataList",
			streamList: streamsList(&metav1.PartialObjectMetadataList{}),
		}
	}
	return &codec[T]{
		listAccept:  mediaType + asPartialObjectMetadataList,
		watchAccept: mediaType + asPartialObjectMetadata,
		protobuf:    protobuf,
		fast:        fast,
		// As for typed objects: apiVersion and kind are cleared; the Go type says
		// what they are.
		objects:   runtime.WithoutVersionDecoder{Decoder: info.Serializer},
		framer:    info.StreamSerializer.Framer,
		newObject: func() T { return any(&metav1.PartialObjectMetadata{}).(T) },
		newList:   func() runtime.Object { return &metav1.PartialObjectMetadataList{} },
	}, nil
}
