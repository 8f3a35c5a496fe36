package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// elementKey is the W3C WebDriver "web element identifier": the JSON key under which a
// web element reference carries the element's id, in both directions (WebDriver spec,
// section "Elements"). Checked against the spec text and chromedriver's own answers.
const elementKey = "element-6066-11e4-a52e-4f735466cecf"

// maxResponse bounds a WebDriver response body. A 1280×900 PNG screenshot in base64 is
// a few MB; anything near this limit is a bug, not a page.
const maxResponse = 64 << 20

// Error is a WebDriver command that failed: the driver's answer had an error status
// and a body {"value": {"error": code, "message": ...}}.
type Error struct {
	// Command is the method and path, with the session id elided, e.g. "POST /element".
	Command string
	// Status is the HTTP status code, e.g. 404 for "no such element".
	Status int
	// Code is the WebDriver error code, e.g. "no such element", "javascript error",
	// "invalid session id".
	Code string
	// Message is the driver's full message (chromedriver appends session info).
	Message string
}

// Error returns the code and the first line of the message.
func (e *Error) Error() string {
	msg, _, _ := strings.Cut(e.Message, "\n")
	// Why: chromedriver repeats the code at the start of the message ("no such
	// element: Unable to locate element: ...").
	msg = strings.TrimPrefix(msg, e.Code+": ")
	return fmt.Sprintf("webdriver %s: %s (HTTP %d): %s", e.Command, e.Code, e.Status, msg)
}

// client sends WebDriver commands to one driver over plain HTTP + JSON.
type client struct {
	base string // "http://127.0.0.1:PORT"
	http *http.Client
}

// newClient returns a client for the driver at base.
//
// Why its own Transport: Close can drop its idle connections, and Proxy stays nil so
// that an HTTP_PROXY in the environment never sees loopback traffic.
func newClient(base string) *client {
	return &client{base: base, http: &http.Client{Transport: &http.Transport{Proxy: nil}}}
}

// call sends method path with in as JSON (POST only) and decodes the answer's "value"
// into out (if non-nil); name is the command in errors. It returns *Error for a
// WebDriver error answer. ctx bounds the whole exchange.
func (c *client) call(ctx context.Context, method, path, name string, in, out any) error {
	var body io.Reader
	if method == http.MethodPost {
		// Pitfall: chromedriver rejects a POST without a JSON body, even for commands
		// that take no parameters (element click): send {} then.
		if in == nil {
			in = struct{}{}
		}
		data, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encoding %s: %w", name, err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return fmt.Errorf("%s: reading the answer: %w", name, err)
	}
	var envelope struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(data, &envelope); err != nil {
		return fmt.Errorf("%s: HTTP %d, not a WebDriver answer: %w: %.200q", name, resp.StatusCode, err, data)
	}
	if resp.StatusCode >= 300 {
		var werr struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(envelope.Value, &werr) // an odd body still gets its status reported
		return &Error{Command: name, Status: resp.StatusCode, Code: werr.Error, Message: werr.Message}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(envelope.Value, out); err != nil {
		return fmt.Errorf("%s: decoding %.200s: %w", name, envelope.Value, err)
	}
	return nil
}

// Element is a reference to an element of the current page, valid until the page
// navigates or the element is removed ("stale element reference" afterwards).
// Passed to Execute, it arrives in the script as the DOM element itself.
type Element struct {
	// Selector is the CSS selector it was found by, for messages.
	Selector string
	// ID is the driver's opaque id for the element.
	ID string
}

// MarshalJSON encodes the element as a W3C web element reference, which is how
// WebDriver scripts receive elements as arguments.
func (e Element) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{elementKey: e.ID})
}

// decodeElement reads a web element reference from a Find Element answer.
func decodeElement(selector string, raw map[string]string) (Element, error) {
	id, ok := raw[elementKey]
	if !ok || id == "" {
		return Element{}, fmt.Errorf("find %q: answer %v has no %q key", selector, raw, elementKey)
	}
	return Element{Selector: selector, ID: id}, nil
}
