package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/trace"
)

// The watch-wire scenario's second half: a watch-list, which kube-apiserver v1.37
// gzips for a request that accepts gzip, read off the wire member by member; the
// headers of two more watches; and what our RESTListerWatcher's transport sent and
// received.
//
// kube-apiserver: k8s.io/apiserver/pkg/endpoints/handlers/watch.go watchResponseWriter.BeginStream, perFlushGzipWriter
// kube-apiserver: k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/compression.go ContentEncodingSupported

// watchListQuery is a watch-list of the lab's ConfigMaps: the initial state as ADDED
// events, a bookmark annotated k8s.io/initial-events-end, then the changes.
func watchListQuery() url.Values {
	q := url.Values{}
	q.Set("watch", "true")
	q.Set("sendInitialEvents", "true")
	q.Set("resourceVersionMatch", "NotOlderThan")
	q.Set("allowWatchBookmarks", "true")
	q.Set("labelSelector", labLabel)
	q.Set("timeoutSeconds", strconv.Itoa(watchTimeout))
	return q
}

// watchListByHand opens a watch-list accepting gzip, waits for the end of its initial
// events, changes before, waits for that change, and prints and checks the body: its
// chunks, the gzip members they hold, and the events in each member. It returns the
// answer's half about the watch-list.
func watchListByHand(ctx context.Context, lab *Lab, r *Report, wire *trace.Tracer, core rest.Interface, before *corev1.ConfigMap) (string, error) {
	ns := before.Namespace
	raw, err := openRaw(ctx, lab.Direct, watchPath(ns), watchListQuery(), true)
	if err != nil {
		return "", err
	}
	defer raw.close()
	r.Do("open a second connection and send a watch-list — sendInitialEvents=true, resourceVersionMatch=NotOlderThan, no resourceVersion — accepting gzip too:")
	if err := raw.report(r, "the watch-list"); err != nil {
		return "", err
	}
	ce := header(raw.headers, "Content-Encoding")
	// Why decode as the body comes: the waits below look for events inside it. A body
	// that is not gzipped is read as plain JSON lines, so that the checks, not an
	// error, say what came.
	members := func(got []wireChunk) ([]bodyMember, error) {
		if ce == "gzip" {
			return gzipMembers(got)
		}
		return plainMembers(got), nil
	}
	seen := func(match func(wireEvent) bool) func([]wireChunk) bool {
		return func(got []wireChunk) bool {
			ms, _ := members(got)
			_, _, ok := findEvent(ms, match)
			return ok
		}
	}

	body := readBody(raw)
	defer body.stop()
	if err := body.await("the bookmark that ends the initial events", seen(wireEvent.endsInitialEvents)); err != nil {
		return "", err
	}
	before.Data["k"] = "changed"
	if err := updateConfigMap(ctx, core, before); err != nil {
		return "", err
	}
	isModified := func(ev wireEvent) bool { return ev.Type == "MODIFIED" && ev.Object.Metadata.Name == "before" }
	if err := body.await("before's MODIFIED event", seen(isModified)); err != nil {
		return "", err
	}
	r.Do("wait for the bookmark that ends the initial events, PUT ConfigMap before with new data, wait for its MODIFIED event; then close the connection")
	body.stop()

	got := body.got
	ms, decodeErr := members(got)
	for i, c := range got {
		r.See("+%s chunk %d: %d bytes, beginning %s", c.at.Sub(got[0].at).Round(time.Microsecond), i+1, len(c.data), hexPrefix(c.data, 4))
	}
	wholeEvents, wholeMembers, inChunk := true, 0, true
	var types []string
	for i, m := range ms {
		evs, whole := m.events()
		wholeEvents = wholeEvents && whole
		wholeMembers += m.size
		inChunk = inChunk && m.firstChunk == m.lastChunk
		r.See("%s %d: %d bytes on the wire (chunk %s), %d decoded:", m.kind, i+1, m.size, chunkRange(m), len(m.data))
		for _, ev := range evs {
			end := ""
			if ev.endsInitialEvents() {
				end = " (k8s.io/initial-events-end)"
			}
			r.See("    → %s %s rv=%s%s", ev.Type, ev.Object.Metadata.Name, ev.Object.Metadata.ResourceVersion, end)
			if ev.Type != "BOOKMARK" || ev.endsInitialEvents() {
				types = append(types, ev.Type)
			}
			wire.Emit(trace.Event{Time: got[m.lastChunk].at, Stage: trace.Experiment, Kind: trace.WatchEvent, Source: watchListSource,
				Type: ev.Type, Key: ns + "/" + ev.Object.Metadata.Name, ResourceVersion: ev.Object.Metadata.ResourceVersion,
				Detail: fmt.Sprintf("%s %d: %d bytes on the wire, %d decoded", m.kind, i+1, m.size, len(m.data))})
		}
	}
	bodyLen := 0
	for _, c := range got {
		bodyLen += len(c.data)
	}
	endAt, _, _ := findEvent(ms, wireEvent.endsInitialEvents)
	modAt, _, modOK := findEvent(ms, isModified)

	r.Check("the watch-list's response is Content-Encoding: gzip, varying by Accept-Encoding", ce == "gzip" && header(raw.headers, "Vary") == "Accept-Encoding",
		"Content-Encoding: %s; Vary: %s", orNone(ce), orNone(header(raw.headers, "Vary")))
	r.Check("its body is whole gzip members, each in a chunk of its own and holding whole JSON events", decodeErr == nil && wholeMembers == bodyLen && wholeEvents && inChunk && len(ms) > 0,
		"%d bytes in %d chunk(s), %d of them in %d member(s); decoding: %v", bodyLen, len(got), wholeMembers, len(ms), orNil(decodeErr))
	r.Check("the events were ADDED before, the bookmark that ends the initial events, MODIFIED before", strings.Join(types, " ") == "ADDED BOOKMARK MODIFIED",
		"%s", strings.Join(types, ", "))
	modified := "not seen"
	if modOK {
		modified = fmt.Sprintf("member %d of %d: %d bytes on the wire for %d decoded", modAt+1, len(ms), ms[modAt].size, len(ms[modAt].data))
	}
	r.Check("the change made after the initial events came gzipped too, in a member of its own after the bookmark's", ce == "gzip" && modOK && modAt > endAt && len(ms[modAt].data) > 0,
		"%s", modified)
	return fmt.Sprintf("a watch-list comes with Content-Encoding: gzip when the request accepts it: %d gzip members, one per chunk, for the whole watch — the change after the initial events in %s", len(ms), modified), nil
}

// probeContentEncodings reads the headers of two more watches: the same watch-list
// without Accept-Encoding, and a watch from resourceVersion 0 with bookmarks, which
// the apiserver turns into a watch-list (sendInitialEvents=true) before it serves it.
func probeContentEncodings(ctx context.Context, lab *Lab, r *Report, ns string) error {
	head := func(q url.Values, acceptGzip bool) (status, ce string, err error) {
		raw, err := openRaw(ctx, lab.Direct, watchPath(ns), q, acceptGzip)
		if err != nil {
			return "", "", err
		}
		raw.close()
		return raw.status, header(raw.headers, "Content-Encoding"), nil
	}
	plainStatus, plainCE, err := head(watchListQuery(), false)
	if err != nil {
		return err
	}
	q := url.Values{}
	q.Set("watch", "true")
	q.Set("resourceVersion", "0")
	q.Set("allowWatchBookmarks", "true")
	q.Set("labelSelector", labLabel)
	q.Set("timeoutSeconds", strconv.Itoa(watchTimeout))
	rv0Status, rv0CE, err := head(q, true)
	if err != nil {
		return err
	}
	r.Do("send the same watch-list without Accept-Encoding, and a WATCH from resourceVersion 0 with allowWatchBookmarks=true (no sendInitialEvents) accepting gzip; read each response's headers, then close")
	r.See("the watch-list without Accept-Encoding: %s, Content-Encoding: %s", plainStatus, orNone(plainCE))
	r.See("the WATCH from resourceVersion 0 with bookmarks: %s, Content-Encoding: %s", rv0Status, orNone(rv0CE))
	r.See("")
	r.Check("without Accept-Encoding: gzip, the same watch-list comes plain", strings.Contains(plainStatus, " 200 ") && plainCE == "",
		"%s; Content-Encoding: %s", plainStatus, orNone(plainCE))
	r.Check("a WATCH from resourceVersion 0 with bookmarks comes gzipped: the apiserver makes it a watch-list", strings.Contains(rv0Status, " 200 ") && rv0CE == "gzip",
		"%s; Content-Encoding: %s", rv0Status, orNone(rv0CE))
	return nil
}

// ourWatchListOnTheWire opens the watch-list with our RESTListerWatcher — protobuf, as
// the Factory asks for a ConfigMap — and looks from above Go's http.Transport: the
// Accept-Encoding it wrote (httptrace), and the response it returned
// (rest.Config.WrapTransport).
func ourWatchListOnTheWire(ctx context.Context, lab *Lab, r *Report, ns string) error {
	var mu sync.Mutex
	var accept, proto, ce string
	var uncompressed bool
	cfg := rest.CopyConfig(lab.Direct)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			trace := &httptrace.ClientTrace{WroteHeaderField: func(key string, value []string) {
				if strings.EqualFold(key, "Accept-Encoding") {
					mu.Lock()
					accept = strings.Join(value, ",")
					mu.Unlock()
				}
			}}
			resp, err := rt.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
			if err == nil {
				mu.Lock()
				proto, ce, uncompressed = resp.Proto, resp.Header.Get("Content-Encoding"), resp.Uncompressed
				mu.Unlock()
			}
			return resp, err
		})
	}
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	if err != nil {
		return err
	}
	lw, err := listwatch.NewForConfig[*corev1.ConfigMap](cfg, corev1.SchemeGroupVersion, listwatch.Options{
		Resource: "configmaps", Namespace: ns, LabelSelector: labLabel, Scheme: scheme, Protobuf: true,
	})
	if err != nil {
		return err
	}
	yes := true
	wctx, cancel := context.WithTimeout(ctx, awaitLong)
	defer cancel()
	w, err := lw.Watch(wctx, metav1.ListOptions{SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		return err
	}
	added, ended := 0, false
	for ev := range w.ResultChan() {
		if ev.Type == watch.Added {
			added++
		}
		if ev.Type == watch.Bookmark && ev.Object.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
			ended = true
			break
		}
	}
	w.Stop()
	if !ended {
		return fmt.Errorf("our RESTListerWatcher's watch-list ended before its end bookmark (%d ADDED)", added)
	}
	mu.Lock()
	defer mu.Unlock()
	r.Do("open the same watch-list with our listwatch.RESTListerWatcher (protobuf, client-go's rest client underneath), seen from above Go's http.Transport: the Accept-Encoding it wrote (httptrace) and the response it returned (rest.Config.WrapTransport)")
	r.See("our RESTListerWatcher's watch-list, over %s: the transport wrote Accept-Encoding: %s; it returned Uncompressed=%v and Content-Encoding: %s; %d ADDED decoded, then the end bookmark",
		proto, orNone(accept), uncompressed, orNone(ce), added)
	r.Check("our RESTListerWatcher's request asked for gzip without setting it: Go's transport wrote Accept-Encoding: gzip", accept == "gzip",
		"Accept-Encoding: %s", orNone(accept))
	r.Check("the transport undid the gzip before our decoder read the stream, and left it no Content-Encoding", uncompressed && ce == "" && added == 1,
		"Uncompressed=%v; Content-Encoding: %s; %d ADDED decoded", uncompressed, orNone(ce), added)
	return nil
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// bodyMember is one unit of a response body as the scenario decodes it: a gzip
// member, or, for a body that is not gzipped, one chunk.
type bodyMember struct {
	kind                  string // "gzip member" or "chunk"
	size                  int    // bytes on the wire (the chunk's data, not its framing)
	data                  []byte // what it holds, decoded
	firstChunk, lastChunk int    // the chunks it lies in (indexes)
}

// gzipMembers decodes the gzip members the chunks hold, one after the other; a member
// cut short at the end (the rest has not arrived) is left out. It fails on bytes that
// are not gzip.
func gzipMembers(chunks []wireChunk) ([]bodyMember, error) {
	var body []byte
	var ends []int // the offset where each chunk ends
	for _, c := range chunks {
		body = append(body, c.data...)
		ends = append(ends, len(body))
	}
	chunkAt := func(offset int) int {
		for i, end := range ends {
			if offset < end {
				return i
			}
		}
		return len(ends) - 1
	}
	var out []bodyMember
	// Why a bytes.Reader: it is an io.ByteReader, so the gzip reader takes bytes from it
	// without buffering ahead, and its position after a member is where the next begins.
	br := bytes.NewReader(body)
	for br.Len() > 0 {
		start := len(body) - br.Len()
		z, err := gzip.NewReader(br)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("at byte %d: %w", start, err)
		}
		z.Multistream(false)
		data, err := io.ReadAll(z)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("at byte %d: %w", start, err)
		}
		end := len(body) - br.Len()
		out = append(out, bodyMember{kind: "gzip member", size: end - start, data: data, firstChunk: chunkAt(start), lastChunk: chunkAt(end - 1)})
	}
	return out, nil
}

// plainMembers is each chunk as a member of its own: how a body that is not gzipped
// is read.
func plainMembers(chunks []wireChunk) []bodyMember {
	out := make([]bodyMember, 0, len(chunks))
	for i, c := range chunks {
		out = append(out, bodyMember{kind: "chunk", size: len(c.data), data: c.data, firstChunk: i, lastChunk: i})
	}
	return out
}

// events decodes the member's JSON watch events, one a line; whole reports whether it
// held whole events only (every line one event, the last ending in a newline).
func (m bodyMember) events() (evs []wireEvent, whole bool) {
	whole = bytes.HasSuffix(m.data, []byte("\n"))
	for line := range bytes.Lines(m.data) {
		var ev wireEvent
		if json.Unmarshal(line, &ev) != nil {
			whole = false
			continue
		}
		evs = append(evs, ev)
	}
	return evs, whole
}

// findEvent finds the first event that matches: the index of its member and the event.
func findEvent(members []bodyMember, match func(wireEvent) bool) (member int, ev wireEvent, ok bool) {
	for i, m := range members {
		evs, _ := m.events()
		for _, ev := range evs {
			if match(ev) {
				return i, ev, true
			}
		}
	}
	return -1, wireEvent{}, false
}

// chunkRange is "2", or "2–3" for a member that spans chunks (numbered from 1).
func chunkRange(m bodyMember) string {
	if m.firstChunk == m.lastChunk {
		return strconv.Itoa(m.firstChunk + 1)
	}
	return fmt.Sprintf("%d–%d", m.firstChunk+1, m.lastChunk+1)
}

// hexPrefix is the first n bytes of b in hex: "1f 8b 08 00" begins a gzip member.
func hexPrefix(b []byte, n int) string {
	var parts []string
	for _, c := range b[:min(n, len(b))] {
		parts = append(parts, fmt.Sprintf("%02x", c))
	}
	return strings.Join(parts, " ")
}

// orNil is err's text, or "none".
func orNil(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
