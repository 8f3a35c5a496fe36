package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/trace"
)

// watchWire: WATCHes read off the TLS connection byte by byte — the status line, the
// headers, and each chunk of the chunked body as it arrives: a plain watch, then a
// watch-list, which kube-apiserver v1.37 gzips.
func watchWire() Scenario {
	return Scenario{
		Name:     "watch-wire",
		Question: "What travels on a WATCH?",
		Why: "A WATCH is one long HTTP GET whose response never ends on its own: over HTTP/1.1 the body is chunked (Transfer-Encoding: chunked), and the apiserver writes and flushes each event as one JSON object and a newline, " +
			"so each event of a plain watch arrives as one chunk: {\"type\": ADDED | MODIFIED | DELETED | BOOKMARK | ERROR, \"object\": the whole object}. " +
			"Every event carries the full object at its new resourceVersion, never a diff. " +
			"A watch-list is gzipped when its request accepts gzip (the apiserver's WatchListCompression feature, new in 1.37 and on by default): Content-Encoding: gzip for the whole watch, the events after the initial ones included, each flush ending one gzip member, however small. " +
			"The apiserver counts as a watch-list every watch whose options, once it has filled in their defaults, say sendInitialEvents=true and allowWatchBookmarks=true — a watch from resourceVersion \"\" or \"0\" with bookmarks too — and compresses no other watch. " +
			"Go's http.Transport adds Accept-Encoding: gzip to every request of client-go's rest client, and so of our RESTListerWatcher, unless rest.Config.DisableCompression is set, and undoes the gzip before the decoder reads; examples/01-raw-list-watch reads a plain watch through net/http, which hides the chunk boundaries.",
		Read: []string{
			"docs/03-reflector.md (WATCH, and the watch on the wire) and examples/01-raw-list-watch (the same watch with rest.Request.Stream)",
			"listwatch/streamwatch.go: streamWatch.receive; reflector/watch.go: Reflector.watch",
			"examples/lab/raw_request.go: openRaw (the request, written by hand)",
		},
		Run:      runWatchWire,
		Recorded: watchWireRecorded,
	}
}

// wireChunk is one chunk of a chunked HTTP body, as read off the connection.
type wireChunk struct {
	sizeLine string // the hex size line, as sent
	data     []byte
	at       time.Time
	err      error // reading failed (the stream is over)
}

// wireEvent is the part of a JSON watch event this scenario reads.
type wireEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Name            string            `json:"name"`
			ResourceVersion string            `json:"resourceVersion"`
			Annotations     map[string]string `json:"annotations"`
		} `json:"metadata"`
	} `json:"object"`
}

// endsInitialEvents reports whether ev is the bookmark that ends a watch-list's
// initial events.
func (ev wireEvent) endsInitialEvents() bool {
	return ev.Type == "BOOKMARK" && ev.Object.Metadata.Annotations["k8s.io/initial-events-end"] == "true"
}

// watchTimeout is the server-side timeout the raw watches ask for: it ends a stream
// if the scenario fails to.
const watchTimeout = 60

// The sources of the events the scenario records, read off the wire: no informer
// ran, so no stage of the library reported them.
const (
	plainWatchSource = "hand-made watch"
	watchListSource  = "hand-made watch-list"
)

// runWatchWire lists, then reads by hand a plain watch (three writes, a chunk each)
// and a watch-list (gzipped), the headers of two more watches, and what our
// RESTListerWatcher's transport sent and received.
func runWatchWire(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "watch-wire")
	if err != nil {
		return nil, err
	}
	before := configMap(ns, "before")
	if err := create(ctx, core, ns, "configmaps", before); err != nil {
		return nil, err
	}
	list := &corev1.ConfigMapList{}
	if err := core.Get().Namespace(ns).Resource("configmaps").Param("labelSelector", labLabel).Do(ctx).Into(list); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMap before into %s, then LIST the lab's ConfigMaps there: %d item(s) at resourceVersion %s", ns, len(list.Items), list.ResourceVersion)
	wire := lab.tracer()
	plain, err := plainWatchByHand(ctx, lab, r, wire, core, ns, list.ResourceVersion)
	if err != nil {
		return nil, err
	}
	gzipped, err := watchListByHand(ctx, lab, r, wire, core, before)
	if err != nil {
		return nil, err
	}
	if err := probeContentEncodings(ctx, lab, r, ns); err != nil {
		return nil, err
	}
	if err := ourWatchListOnTheWire(ctx, lab, r, ns); err != nil {
		return nil, err
	}
	r.Answer = plain + "; " + gzipped
	return r, nil
}

// watchPath is the URL path of the ConfigMaps of ns.
func watchPath(ns string) string { return "/api/v1/namespaces/" + ns + "/configmaps" }

// plainWatchByHand opens a plain WATCH from rv, accepting gzip, writes a ConfigMap
// three times, prints each chunk, and checks what it saw. It returns the answer's
// half about the plain watch.
func plainWatchByHand(ctx context.Context, lab *Lab, r *Report, wire *trace.Tracer, core rest.Interface, ns, rv string) (string, error) {
	q := url.Values{}
	q.Set("watch", "true")
	q.Set("resourceVersion", rv)
	q.Set("allowWatchBookmarks", "true")
	q.Set("labelSelector", labLabel)
	q.Set("timeoutSeconds", strconv.Itoa(watchTimeout))
	raw, err := openRaw(ctx, lab.Direct, watchPath(ns), q, true)
	if err != nil {
		return "", err
	}
	defer raw.close()
	r.Do("open a TLS connection to %s (ALPN http/1.1) and send, by hand, a plain WATCH from the LIST's resourceVersion, accepting gzip as Go's http.Transport does:", raw.host)
	if err := raw.report(r, "the plain WATCH"); err != nil {
		return "", err
	}

	body := readBody(raw)
	defer body.stop()
	// Each write, then the chunk it causes, so that the output reads write by write.
	cm := configMap(ns, "wire", "k", "v1")
	if err := create(ctx, core, ns, "configmaps", cm); err != nil {
		return "", err
	}
	if err := body.await("an ADDED chunk", chunkOf("ADDED")); err != nil {
		return "", err
	}
	cm.Data["k"] = "v2"
	if err := updateConfigMap(ctx, core, cm); err != nil {
		return "", err
	}
	if err := body.await("a MODIFIED chunk", chunkOf("MODIFIED")); err != nil {
		return "", err
	}
	if err := deleteObject(ctx, core, "configmaps", ns, "wire"); err != nil {
		return "", err
	}
	if err := body.await("a DELETED chunk", chunkOf("DELETED")); err != nil {
		return "", err
	}
	r.Do("POST ConfigMap wire, PUT it with new data, DELETE it — each after the previous event's chunk arrived; then close the connection")
	body.stop()

	// What arrived, chunk by chunk; the recording gets each event.
	got := body.got
	var types, rvs []string
	oneEventEach := true
	for i, c := range got {
		var ev wireEvent
		parsed := json.Unmarshal(c.data, &ev) == nil
		lines := bytes.Count(c.data, []byte("\n"))
		if !parsed || lines != 1 || !bytes.HasSuffix(c.data, []byte("\n")) {
			oneEventEach = false
		}
		if ev.Type != "BOOKMARK" {
			types = append(types, ev.Type)
			rvs = append(rvs, ev.Object.Metadata.ResourceVersion)
		}
		r.See("+%s chunk %d: size line %q (hex for %d bytes), %d newline(s)", c.at.Sub(got[0].at).Round(time.Microsecond), i+1, c.sizeLine, len(c.data), lines)
		r.See("    %s", elide(strings.TrimRight(string(c.data), "\n"), 100, 40))
		r.See("    → %s %s rv=%s", ev.Type, ev.Object.Metadata.Name, ev.Object.Metadata.ResourceVersion)
		wire.Emit(trace.Event{Time: c.at, Stage: trace.Experiment, Kind: trace.WatchEvent, Source: plainWatchSource,
			Type: ev.Type, Key: ns + "/" + ev.Object.Metadata.Name, ResourceVersion: ev.Object.Metadata.ResourceVersion,
			Detail: fmt.Sprintf("chunk %d: %d bytes", i+1, len(c.data))})
	}
	increasing := len(rvs) > 0
	for i := 1; i < len(rvs); i++ {
		a, errA := strconv.ParseInt(rvs[i-1], 10, 64)
		b, errB := strconv.ParseInt(rvs[i], 10, 64)
		increasing = increasing && errA == nil && errB == nil && b > a
	}
	replayed := slices.ContainsFunc(got, func(c wireChunk) bool { return bytes.Contains(c.data, []byte(`"name":"before"`)) })
	te, ct, ce := header(raw.headers, "Transfer-Encoding"), header(raw.headers, "Content-Type"), header(raw.headers, "Content-Encoding")

	r.Check("the response is HTTP/1.1 200 with a chunked JSON body", strings.HasPrefix(raw.status, "HTTP/1.1 200") && te == "chunked" && strings.HasPrefix(ct, "application/json"),
		"%s; Transfer-Encoding: %s; Content-Type: %s", raw.status, te, ct)
	r.Check("the plain watch is not compressed, although its request accepts gzip: no Content-Encoding", ce == "", "Content-Encoding: %s", orNone(ce))
	r.Check("each chunk held exactly one JSON watch event, ending in a newline", oneEventEach && len(got) > 0, "%d chunks", len(got))
	r.Check("the events were ADDED, MODIFIED, DELETED, in order, with increasing resourceVersions", slices.Equal(types, []string{"ADDED", "MODIFIED", "DELETED"}) && increasing,
		"%s at rv %s", strings.Join(types, ", "), strings.Join(rvs, ", "))
	r.Check("the ConfigMap that existed at the LIST's resourceVersion was not replayed", !replayed, "before in the stream: %v", replayed)
	return fmt.Sprintf("a plain WATCH is one HTTP/1.1 response that does not end: %s and no Content-Encoding although the request accepted gzip, then one chunk per event, each a JSON {type, object} line with the whole object — %s at resourceVersions %s, %d to %d bytes each",
		"Transfer-Encoding: "+te, strings.Join(types, ", "), strings.Join(rvs, ", "), minLen(got), maxLen(got)), nil
}

// chunkOf is an await condition: some chunk holds an event of type typ.
func chunkOf(typ string) func([]wireChunk) bool {
	return func(got []wireChunk) bool {
		return slices.ContainsFunc(got, func(c wireChunk) bool {
			var ev wireEvent
			return json.Unmarshal(c.data, &ev) == nil && ev.Type == typ
		})
	}
}

// orNone is s, or "(none)" when s is empty.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// bodyReader reads a raw response's chunked body in a goroutine of its own.
type bodyReader struct {
	chunks chan wireChunk
	done   chan struct{}
	reader sync.WaitGroup
	got    []wireChunk // the chunks await has read
	// stop ends the reads and closes the connection; it may be called more than once.
	stop func()
}

func readBody(raw *rawRequest) *bodyReader {
	b := &bodyReader{chunks: make(chan wireChunk), done: make(chan struct{})}
	// Owner: the scenario, through stop. Exits when the connection is closed or the
	// body ends, and never blocks on a send once done is closed.
	b.reader.Go(func() { readChunks(raw.br, b.chunks, b.done) })
	b.stop = sync.OnceFunc(func() {
		close(b.done)
		raw.close()
		b.reader.Wait()
	})
	return b
}

// await reads chunks until seen says the ones read so far hold what it waits for, for
// at most awaitLong.
func (b *bodyReader) await(what string, seen func([]wireChunk) bool) error {
	timeout := time.NewTimer(awaitLong)
	defer timeout.Stop()
	for !seen(b.got) {
		select {
		case c := <-b.chunks:
			if c.err != nil {
				return fmt.Errorf("reading the watch: %w", c.err)
			}
			b.got = append(b.got, c)
		case <-timeout.C:
			return fmt.Errorf("waiting %s for %s", awaitLong, what)
		}
	}
	return nil
}

// readChunks decodes a chunked body by hand — a hex size line, that many bytes, CRLF —
// and sends each chunk on out until the last (size 0) or an error, which it sends too.
// It returns without sending once done is closed.
func readChunks(br *bufio.Reader, out chan<- wireChunk, done <-chan struct{}) {
	send := func(c wireChunk) bool {
		select {
		case out <- c:
			return c.err == nil
		case <-done:
			return false
		}
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			send(wireChunk{err: err})
			return
		}
		sizeLine := strings.TrimRight(line, "\r\n")
		hexSize, _, _ := strings.Cut(sizeLine, ";") // chunk extensions, if any
		size, err := strconv.ParseInt(strings.TrimSpace(hexSize), 16, 64)
		if err != nil {
			send(wireChunk{err: fmt.Errorf("chunk size line %q: %w", sizeLine, err)})
			return
		}
		if size == 0 {
			send(wireChunk{err: io.EOF})
			return
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(br, data); err != nil {
			send(wireChunk{err: err})
			return
		}
		at := time.Now()
		if _, err := br.Discard(2); err != nil { // the CRLF after the data
			send(wireChunk{err: err})
			return
		}
		if !send(wireChunk{sizeLine: sizeLine, data: data, at: at}) {
			return
		}
	}
}

// elide keeps s's first head and last tail bytes, saying how many it left out.
func elide(s string, head, tail int) string {
	if len(s) <= head+tail {
		return s
	}
	return fmt.Sprintf("%s … (%d bytes) … %s", s[:head], len(s)-head-tail, s[len(s)-tail:])
}

// minLen is the smallest chunk's size.
func minLen(chunks []wireChunk) int {
	m := 0
	for i, c := range chunks {
		if i == 0 || len(c.data) < m {
			m = len(c.data)
		}
	}
	return m
}

// maxLen is the largest chunk's size.
func maxLen(chunks []wireChunk) int {
	m := 0
	for _, c := range chunks {
		m = max(m, len(c.data))
	}
	return m
}

// watchWireRecorded: the events read off the plain watch were ADDED, MODIFIED, DELETED
// of the one ConfigMap written after the LIST; those read off the gzipped watch-list
// were ADDED, then MODIFIED, of the ConfigMap that existed before it.
func watchWireRecorded(r recorded) Check {
	wire := r.where(func(e trace.Event) bool { return e.Stage == trace.Experiment && e.Kind == trace.WatchEvent })
	notBookmark := func(e trace.Event) bool { return e.Type != "BOOKMARK" }
	plain, list := wire.from(plainWatchSource), wire.from(watchListSource)
	types := plain.where(notBookmark).types()
	listTypes := list.where(notBookmark).types()
	return check("the plain watch's chunks carried ADDED, MODIFIED, DELETED of wire, and nothing of before; the watch-list's gzip members ADDED, then MODIFIED, of before",
		strings.Join(types, " ") == "ADDED MODIFIED DELETED" && len(plain.about("/before")) == 0 && len(plain.about("/wire")) == 3 &&
			strings.Join(listTypes, " ") == "ADDED MODIFIED" && len(list.where(notBookmark).about("/before")) == 2,
		"plain: %s; watch-list: %s", strings.Join(types, ", "), strings.Join(listTypes, ", "))
}
