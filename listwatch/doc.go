// Package listwatch is the HTTP side of a reflector: a ListerWatcher that LISTs and
// WATCHes one resource of a Kubernetes API server through k8s.io/client-go/rest and
// decodes the answers into a typed T (or *unstructured.Unstructured), in JSON or
// protobuf; a T of *metav1.PartialObjectMetadata asks for each object's metadata
// only, of any resource (metadata.go). It is client-go's ListWatch
// (tools/cache/listwatch.go), its metadata client, and the stream decoding under
// them (apimachinery's StreamWatcher, streaming decoder and protobuf serializer),
// rebuilt without a scheme-wide decoder.
//
// # Where it sits
//
//	kube-apiserver
//	    │  HTTP: GET …?watch=true (a stream of frames) / GET … (one list body)
//	    ▼
//	listwatch.RESTListerWatcher ◀── this package: requests, framing, decoding
//	    │  reflector.ListResult[T] / reflector.Watch[T] (a channel of reflector.Event[T])
//	    ▼
//	reflector.Reflector ──▶ a queue or a store
//
// The reflector package defines the ListerWatcher interface it consumes and never
// imports this one: the reflector is the state machine (when to list, watch, relist,
// back off), this package is the wire. Tests of the reflector script a ListerWatcher
// of their own instead (reflector.ListWatch, reflector.FakeWatch); the same line runs
// between kube-rs's watcher and its reflector.
//
// # What one request does
//
//   - List sends one GET with the ListOptions the reflector chose (resourceVersion,
//     limit, continue) and the configured selectors, and an Accept header naming
//     exactly one media type, so the body's framing is known without its headers. A
//     protobuf list of a generated type is decoded as it arrives, item by item
//     (liststream.go); any other body is read whole and decoded (decode.go).
//   - Watch opens one streaming GET and returns at once; a goroutine owned by the
//     returned Watch reads one frame at a time (at most 16 MiB), decodes it into an
//     Event and hands it over (streamwatch.go). Stop cancels the request and waits for
//     that goroutine. A watch that asks for its initial events (a watch-list) can
//     have its events decoded by several goroutines instead (Options.DecodeConcurrency,
//     concurrentdecode.go): the reading goroutine copies each frame into a ring of
//     slots, decoders fill them, and one goroutine hands the events over in the order
//     the frames arrived, so the reflector cannot tell the difference.
//   - Protobuf frames and list items of a generated type are decoded straight from
//     the wire bytes, without the two copies apimachinery's wrappers make
//     (protoenvelope.go).
//   - Compression is the transport's business, as in client-go: we set no
//     Accept-Encoding, so Go's http.Transport asks for gzip unless
//     rest.Config.DisableCompression is set, and decompresses a gzipped body before
//     the decoders read it. kube-apiserver v1.37 gzips a watch whose options, after
//     its defaulting, say sendInitialEvents=true and allowWatchBookmarks=true — a
//     watch-list, or a watch from RV "" or "0" with bookmarks — and no other watch
//     (TestIntegrationAWatchListIsGzippedOnTheWireAndDecodedBeforeOurDecoder in
//     reflector/); the events after the initial ones stay gzipped (the lab's
//     watch-wire reads them off the wire).
//
// # Invariants
//
//   - A wrong-type or undecodable object in a watch stream is logged with its key
//     (namespace/name, recovered from the raw bytes even when the object does not
//     decode) as a DecodeError and skipped; the watch goes on.
//   - A stream whose framing is broken (bad JSON, an HTTP/2 stream reset) ends with
//     an ERROR event, a 500 InternalError naming the cause, as client-go's does. A
//     clean end or a connection closed or reset, even in the middle of a frame,
//     just closes the channel: the reflector re-watches from its last RV.
//   - The server's Status errors reach the caller as API errors (410 Expired, 429,
//     403, …), which the reflector classifies.
//   - When Stop returns, the decoding goroutine has exited and the response body is
//     closed. Cancelling the List's ctx aborts the request.
//   - Nothing here panics on bad input: constructors return ErrInvalidOptions, bad
//     bytes become errors.
//
// # Reading order
//
// restclient.go (NewScheme, NewRESTClient), restlw.go (Options, RESTListerWatcher,
// New, NewForConfig: JSON by default, Protobuf: true for built-in types with a
// Scheme), decode.go (the codec, frames, DecodeError, ErrWrongType), streamwatch.go
// (the goroutine per watch), concurrentdecode.go (a watch-list's decoders),
// metadata.go (metadata only, for a T of
// *metav1.PartialObjectMetadata), then the protobuf fast paths: protoenvelope.go
// and liststream.go.
//
// # Differences from client-go
//
//   - Typed: a RESTListerWatcher[T] decodes into T itself, so the reflector has no
//     expected type to check at run time. client-go's stream decoder turns an
//     undecodable object into an ERROR event, which ends the watch and relists
//     everything; we skip that one event.
//   - A watch-list's events are decoded by one goroutine per processor (at most 4)
//     by default, in stream order (Options.DecodeConcurrency); client-go 1.37 decodes
//     every watch on one goroutine, and 1.38 decodes a watch-list concurrently too.
//   - Watch requests are not rate limited (Request.Throttle(nil)), as in client-go;
//     we open them with rest.Request.Stream and decode frames ourselves.
//   - JSON unless Options.Protobuf is set, as a bare client-go ListWatch over a
//     rest.Interface; client-go's typed clientsets ask for protobuf for built-in
//     types, and so does the informer package's Factory.
//   - Simplified: no Table output, no content-type negotiation (we send exactly one
//     media type), and no CBOR.
package listwatch
