package main

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fetch metadata a browser sends (https://www.w3.org/TR/fetch-metadata/), as the
// requests below name them.
const (
	site = "Sec-Fetch-Site"
	mode = "Sec-Fetch-Mode"
	dest = "Sec-Fetch-Dest"
)

// TestOtherSitesCannotReadTheExplorer: the GET endpoints answer the explorer's own page
// (and clients that send no fetch metadata), never a page of another site or origin —
// including another port of localhost, which a browser calls the same site.
func TestOtherSitesCannotReadTheExplorer(t *testing.T) {
	ts := startTestServer(t, true, nil)
	otherPort := "http://127.0.0.1:1"
	everyPath := []string{"/", "/events", "/state", "/journey?source=foos&key=explore/demo", "/static/app.js"}

	refusedEverywhere := []struct {
		name    string
		headers map[string]string
		says    string
	}{
		{"a fetch from a page of another site", map[string]string{site: "cross-site", mode: "cors", dest: "empty", "Origin": "http://evil.example"}, "Sec-Fetch-Site"},
		{"a fetch from another port of localhost, which is the same site", map[string]string{site: "same-site", mode: "cors", dest: "empty", "Origin": otherPort}, "Sec-Fetch-Site"},
		{"a script tag of another site", map[string]string{site: "cross-site", mode: "no-cors", dest: "script"}, "Sec-Fetch-Site"},
		{"a frame on another site's page", map[string]string{site: "cross-site", mode: "navigate", dest: "iframe"}, "Sec-Fetch-Site"},
		{"an unknown Sec-Fetch-Site", map[string]string{site: "somewhere-else"}, "Sec-Fetch-Site"},
		{"a request with another site's Origin and no fetch metadata", map[string]string{"Origin": "http://evil.example"}, "Origin"},
		{"a request with another port's Origin and no fetch metadata", map[string]string{"Origin": otherPort}, "Origin"},
		{"a request from an opaque origin (a sandboxed frame)", map[string]string{"Origin": "null"}, "Origin"},
		{"a same-origin claim with a foreign Origin", map[string]string{site: "same-origin", "Origin": "http://evil.example"}, "Origin"},
	}
	for _, c := range refusedEverywhere {
		for _, path := range everyPath {
			t.Run(c.name+" for "+path+" is refused", func(t *testing.T) {
				code, body := answer(t, getWith(t, ts.URL+path, c.headers))
				assert.Equal(t, http.StatusForbidden, code, body)
				assert.Contains(t, message(t, body), c.says)
			})
		}
	}

	refused := []struct {
		name, path string
		headers    map[string]string
	}{
		{"a link from another site to the stream", "/events", map[string]string{site: "cross-site", mode: "navigate", dest: "document"}},
		{"a link from another site to the state", "/state", map[string]string{site: "cross-site", mode: "navigate", dest: "document"}},
		{"a link from another port of localhost to a journey", "/journey?source=foos&key=explore/demo", map[string]string{site: "same-site", mode: "navigate", dest: "document"}},
	}
	for _, c := range refused {
		t.Run(c.name+" is refused", func(t *testing.T) {
			code, body := answer(t, getWith(t, ts.URL+c.path, c.headers))
			assert.Equal(t, http.StatusForbidden, code, body)
			assert.Contains(t, message(t, body), "Sec-Fetch-Site")
		})
	}

	allowed := []struct {
		name, path string
		headers    map[string]string
	}{
		{"the page typed in the address bar", "/", map[string]string{site: "none", mode: "navigate", dest: "document"}},
		{"the page opened from a link on another site, which cannot read it", "/", map[string]string{site: "cross-site", mode: "navigate", dest: "document"}},
		{"the page reloaded from itself", "/", map[string]string{site: "same-origin", mode: "navigate", dest: "document"}},
		{"the page's script", "/static/app.js", map[string]string{site: "same-origin", mode: "no-cors", dest: "script"}},
		{"the page's EventSource", "/events", map[string]string{site: "same-origin", mode: "cors", dest: "empty"}},
		{"the page's journey fetch", "/journey?source=foos&key=explore/demo", map[string]string{site: "same-origin", mode: "cors", dest: "empty"}},
		{"a same-origin request that carries its own Origin", "/state", map[string]string{site: "same-origin", "Origin": ts.URL}},
		{"a client that sends no fetch metadata (curl, a test)", "/state", nil},
	}
	for _, c := range allowed {
		t.Run(c.name+" is served", func(t *testing.T) {
			code, body := answer(t, getWith(t, ts.URL+c.path, c.headers))
			assert.Equal(t, http.StatusOK, code, body)
		})
	}
}

// getWith is a GET of url carrying headers.
func getWith(t *testing.T, url string, headers map[string]string) *http.Request {
	t.Helper()
	req := mustGet(t, url)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req
}

// answer is do for a request that may open an event stream: a stream's body is not
// read (it would never end) but closed, and answered as "(an event stream)".
func answer(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	if resp.Header.Get("Content-Type") == "text/event-stream" {
		require.NoError(t, resp.Body.Close())
		return resp.StatusCode, "(an event stream)"
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}
