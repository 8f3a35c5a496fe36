package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/trace"
)

// watchWire: a WATCH read off the TLS connection byte by byte — the status line,
// the headers, and each chunk of the chunked body as it arrives.
func watchWire() Scenario {
	return Scenario{
		Name:     "watch-wire",
		Question: "What travels on a WATCH?",
		Why: "A WATCH is one long HTTP GET whose response never ends on its own: over HTTP/1.1 the body is chunked (Transfer-Encoding: chunked), and the apiserver writes and flushes each event as one JSON object and a newline, " +
			"so each event arrives as one chunk: {\"type\": ADDED | MODIFIED | DELETED | BOOKMARK | ERROR, \"object\": the whole object}. " +
			"Every event carries the full object at its new resourceVersion, never a diff; examples/01-raw-list-watch reads the same stream through net/http, which hides the chunk boundaries.",
		Read: []string{
			"docs/03-reflector.md (WATCH) and examples/01-raw-list-watch (the same watch with rest.Request.Stream)",
			"listwatch/streamwatch.go: streamWatch.receive; reflector/watch.go: Reflector.watch",
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

// wireEvent is the part of a watch event this scenario reads.
type wireEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Name            string `json:"name"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	} `json:"object"`
}

// watchTimeout is the server-side timeout the raw watch asks for: it ends the
// stream if the scenario fails to.
const watchTimeout = 60

// runWatchWire lists, opens a watch by hand on a raw TLS connection, writes three
// changes and prints each chunk that arrives.
func runWatchWire(ctx context.Context, lab *Lab) (*Report, error) {
	r := lab.newReport()
	core, ns, err := lab.begin(ctx, "watch-wire")
	if err != nil {
		return nil, err
	}
	if err := create(ctx, core, ns, "configmaps", configMap(ns, "before")); err != nil {
		return nil, err
	}
	list := &corev1.ConfigMapList{}
	if err := core.Get().Namespace(ns).Resource("configmaps").Param("labelSelector", labLabel).Do(ctx).Into(list); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMap before into %s, then LIST the lab's ConfigMaps there: %d item(s) at resourceVersion %s", ns, len(list.Items), list.ResourceVersion)

	// The connection, by hand: TCP, TLS with the client config's CA (and client
	// certificate, if any), HTTP/1.1 because only HTTP/1.1 has chunks.
	tlsCfg, err := rest.TLSConfigFor(lab.Direct)
	if err != nil {
		return nil, err
	}
	if tlsCfg == nil {
		return nil, fmt.Errorf("watch-wire needs an https server, got %s", lab.Direct.Host)
	}
	tlsCfg.NextProtos = []string{"http/1.1"}
	u, err := url.Parse(lab.Direct.Host)
	if err != nil {
		return nil, err
	}
	dialer := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 10 * time.Second}, Config: tlsCfg}
	conn, err := dialer.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() }) // a cancelled scenario ends the reads
	defer stop()

	token := lab.Direct.BearerToken
	if token == "" && lab.Direct.BearerTokenFile != "" {
		b, err := os.ReadFile(lab.Direct.BearerTokenFile)
		if err != nil {
			return nil, err
		}
		token = strings.TrimSpace(string(b))
	}
	q := url.Values{}
	q.Set("watch", "true")
	q.Set("resourceVersion", list.ResourceVersion)
	q.Set("allowWatchBookmarks", "true")
	q.Set("labelSelector", labLabel)
	q.Set("timeoutSeconds", strconv.Itoa(watchTimeout))
	path := strings.TrimSuffix(u.Path, "/") + "/api/v1/namespaces/" + ns + "/configmaps?" + q.Encode()
	request := []string{
		"GET " + path + " HTTP/1.1",
		"Host: " + u.Host,
		"Accept: application/json",
		"User-Agent: kubeinternals-lab/watch-wire",
	}
	shownRequest := slices.Clone(request)
	if token != "" {
		request = append(request, "Authorization: Bearer "+token)
		shownRequest = append(shownRequest, "Authorization: Bearer <token>")
	}
	if _, err := io.WriteString(conn, strings.Join(request, "\r\n")+"\r\n\r\n"); err != nil {
		return nil, err
	}
	r.Do("open a TLS connection to %s (ALPN http/1.1) and send, by hand:", u.Host)
	for _, l := range shownRequest {
		r.Do("  %s", l)
	}

	br := bufio.NewReader(conn)
	status, headers, err := readHead(br)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(status, " 200 ") {
		return nil, fmt.Errorf("the watch was refused: %s", status)
	}
	r.See("%s", status)
	for _, h := range headers {
		r.See("%s", h)
	}
	r.See("")

	chunks := make(chan wireChunk)
	done := make(chan struct{})
	var reader sync.WaitGroup
	// Owner: this scenario. Exits when the connection is closed or the body ends, and
	// never blocks on a send once done is closed.
	reader.Go(func() { readChunks(br, chunks, done) })
	finish := sync.OnceFunc(func() {
		close(done)
		_ = conn.Close()
		reader.Wait()
	})
	defer finish()

	// Each write, then the chunk it causes, so that the output reads write by write.
	var got []wireChunk
	next := func(want string) error {
		timeout := time.NewTimer(awaitLong)
		defer timeout.Stop()
		for {
			select {
			case c := <-chunks:
				if c.err != nil {
					return fmt.Errorf("reading the watch: %w", c.err)
				}
				got = append(got, c)
				var ev wireEvent
				if json.Unmarshal(c.data, &ev) == nil && ev.Type == want {
					return nil
				}
			case <-timeout.C:
				return fmt.Errorf("waiting %s for a %s chunk", awaitLong, want)
			}
		}
	}
	cm := configMap(ns, "wire", "k", "v1")
	if err := create(ctx, core, ns, "configmaps", cm); err != nil {
		return nil, err
	}
	if err := next("ADDED"); err != nil {
		return nil, err
	}
	cm.Data["k"] = "v2"
	if err := updateConfigMap(ctx, core, cm); err != nil {
		return nil, err
	}
	if err := next("MODIFIED"); err != nil {
		return nil, err
	}
	if err := deleteObject(ctx, core, "configmaps", ns, "wire"); err != nil {
		return nil, err
	}
	if err := next("DELETED"); err != nil {
		return nil, err
	}
	r.Do("POST ConfigMap wire, PUT it with new data, DELETE it — each after the previous event's chunk arrived; then close the connection")
	finish()

	// What arrived, chunk by chunk. The recording gets each event as the scenario read
	// it off the wire: no informer ran, so no stage of the library reported it.
	wire := lab.tracer()
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
		wire.Emit(trace.Event{Time: c.at, Stage: trace.Experiment, Kind: trace.WatchEvent, Source: "hand-made watch",
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
	te, ct := header(headers, "Transfer-Encoding"), header(headers, "Content-Type")

	r.Check("the response is HTTP/1.1 200 with a chunked JSON body", strings.HasPrefix(status, "HTTP/1.1 200") && te == "chunked" && strings.HasPrefix(ct, "application/json"),
		"%s; Transfer-Encoding: %s; Content-Type: %s", status, te, ct)
	r.Check("each chunk held exactly one JSON watch event, ending in a newline", oneEventEach && len(got) > 0, "%d chunks", len(got))
	r.Check("the events were ADDED, MODIFIED, DELETED, in order, with increasing resourceVersions", slices.Equal(types, []string{"ADDED", "MODIFIED", "DELETED"}) && increasing,
		"%s at rv %s", strings.Join(types, ", "), strings.Join(rvs, ", "))
	r.Check("the ConfigMap that existed at the LIST's resourceVersion was not replayed", !replayed, "before in the stream: %v", replayed)
	r.Answer = fmt.Sprintf("one HTTP/1.1 response that does not end: %s, then one chunk per event, each a JSON {type, object} line with the whole object — %s at resourceVersions %s, %d to %d bytes each",
		"Transfer-Encoding: "+te, strings.Join(types, ", "), strings.Join(rvs, ", "), minLen(got), maxLen(got))
	return r, nil
}

// readHead reads an HTTP response's status line and headers, up to the blank line.
func readHead(br *bufio.Reader) (status string, headers []string, err error) {
	status, err = br.ReadString('\n')
	if err != nil {
		return "", nil, fmt.Errorf("reading the status line: %w", err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", nil, fmt.Errorf("reading the headers: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			return strings.TrimRight(status, "\r\n"), headers, nil
		}
		headers = append(headers, line)
	}
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

// header is the value of the named header in "Name: value" lines, or "".
func header(lines []string, name string) string {
	for _, l := range lines {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
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

// watchWireRecorded: the events read off the wire were ADDED, MODIFIED, DELETED
// of the one ConfigMap written after the LIST.
func watchWireRecorded(r recorded) Check {
	wire := r.where(func(e trace.Event) bool { return e.Stage == trace.Experiment && e.Kind == trace.WatchEvent })
	types := wire.where(func(e trace.Event) bool { return e.Type != "BOOKMARK" }).types()
	return check("the chunks carried ADDED, MODIFIED, DELETED of wire, and nothing of before",
		strings.Join(types, " ") == "ADDED MODIFIED DELETED" && len(wire.about("/before")) == 0 && len(wire.about("/wire")) == 3,
		"%s", strings.Join(types, ", "))
}
