package browser

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// ErrClosed is wrapped by the error of any Session method called after Close.
var ErrClosed = errors.New("browser session is closed")

// command sends one WebDriver command of this session; path is relative to
// /session/{id}.
func (s *Session) command(ctx context.Context, method, path string, in, out any) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return s.wd.call(ctx, method, "/session/"+s.id+path, method+" "+path, in, out)
}

// elementCommand sends one command about element e; suffix follows /element/{id}.
func (s *Session) elementCommand(ctx context.Context, method string, e Element, suffix string, in, out any) error {
	if s.closed.Load() {
		return ErrClosed
	}
	path := "/session/" + s.id + "/element/" + e.ID + suffix
	// Why a fixed name: the element id is long and opaque; errors name the selector.
	return s.wd.call(ctx, method, path, method+" /element/{id}"+suffix, in, out)
}

// Navigate loads url in the current tab and returns once the page has loaded (the
// document's load event, WebDriver's "normal" page load strategy).
func (s *Session) Navigate(ctx context.Context, url string) error {
	if err := s.command(ctx, http.MethodPost, "/url", map[string]string{"url": url}, nil); err != nil {
		return fmt.Errorf("navigate to %s: %w", url, err)
	}
	return nil
}

// Find returns the first element matching the CSS selector css, or an error whose
// *Error has Code "no such element" when nothing matches. It does not wait for the
// element to appear: use Await for that.
func (s *Session) Find(ctx context.Context, css string) (Element, error) {
	var ref map[string]string
	in := map[string]string{"using": "css selector", "value": css}
	if err := s.command(ctx, http.MethodPost, "/element", in, &ref); err != nil {
		return Element{}, fmt.Errorf("find %q: %w", css, err)
	}
	return decodeElement(css, ref)
}

// Click finds the element matching css and clicks its centre with WebDriver's Element
// Click: a real mouse click after scrolling it into view, which fails (Code "element
// click intercepted" or "element not interactable") where a user could not click,
// unlike a click() from JavaScript.
//
// Why it finds the element again when the click reports it stale: a page that redraws
// (the explorer's plots, on every event) can replace the element between the find and
// the click; a user would click whatever is there now. Only that error is retried, at
// most clickAttempts times in all.
func (s *Session) Click(ctx context.Context, css string) error {
	return s.click(ctx, css, nil)
}

const clickAttempts = 3

// click is Click with a hook run between each find and its click, for the test that
// replaces the element there.
func (s *Session) click(ctx context.Context, css string, afterFind func()) error {
	for attempt := 1; ; attempt++ {
		e, err := s.Find(ctx, css)
		if err != nil {
			return fmt.Errorf("click: %w", err)
		}
		if afterFind != nil {
			afterFind()
		}
		err = s.elementCommand(ctx, http.MethodPost, e, "/click", nil, nil)
		var werr *Error
		if errors.As(err, &werr) && werr.Code == "stale element reference" && attempt < clickAttempts {
			continue
		}
		if err != nil {
			return fmt.Errorf("click %q: %w", css, err)
		}
		return nil
	}
}

// SetValue finds the editable element matching css, clears it, and types text into it
// as key events (so input and keydown handlers run as for a user).
func (s *Session) SetValue(ctx context.Context, css, text string) error {
	e, err := s.Find(ctx, css)
	if err != nil {
		return fmt.Errorf("set value: %w", err)
	}
	if err := s.elementCommand(ctx, http.MethodPost, e, "/clear", nil, nil); err != nil {
		return fmt.Errorf("set value of %q: clear: %w", css, err)
	}
	if err := s.elementCommand(ctx, http.MethodPost, e, "/value", map[string]string{"text": text}, nil); err != nil {
		return fmt.Errorf("set value of %q: %w", css, err)
	}
	return nil
}

// Text returns the rendered text of the element matching css, as a user sees it
// (hidden parts excluded, whitespace collapsed). An input's text is "": use Value.
func (s *Session) Text(ctx context.Context, css string) (string, error) {
	e, err := s.Find(ctx, css)
	if err != nil {
		return "", fmt.Errorf("text: %w", err)
	}
	var text string
	if err := s.elementCommand(ctx, http.MethodGet, e, "/text", nil, &text); err != nil {
		return "", fmt.Errorf("text of %q: %w", css, err)
	}
	return text, nil
}

// Value returns the current value property of the input, textarea or select matching
// css; "" for an element without one.
func (s *Session) Value(ctx context.Context, css string) (string, error) {
	e, err := s.Find(ctx, css)
	if err != nil {
		return "", fmt.Errorf("value: %w", err)
	}
	var value *string // null for an element without a value property
	if err := s.elementCommand(ctx, http.MethodGet, e, "/property/value", nil, &value); err != nil {
		return "", fmt.Errorf("value of %q: %w", css, err)
	}
	if value == nil {
		return "", nil
	}
	return *value, nil
}

// Execute runs script as the body of a JavaScript function in the page, with args
// (JSON values, or Elements) as its arguments, and returns the JSON of what it
// returns: `return document.title` gives "\"Title\"", no return statement gives null.
// A thrown exception gives an *Error with Code "javascript error". A returned Promise
// is awaited.
func (s *Session) Execute(ctx context.Context, script string, args ...any) (json.RawMessage, error) {
	if args == nil {
		args = []any{} // Why: WebDriver requires an array, and nil encodes as null.
	}
	var out json.RawMessage
	in := map[string]any{"script": script, "args": args}
	if err := s.command(ctx, http.MethodPost, "/execute/sync", in, &out); err != nil {
		return nil, fmt.Errorf("execute %.80q: %w", script, err)
	}
	return out, nil
}

// returnStatement detects a function body, as opposed to an expression, in Await.
var returnStatement = regexp.MustCompile(`\breturn\b`)

// Await runs script every 100ms until it returns true or ctx ends. script is either a
// function body as for Execute (`return a && b`) or, when it contains no `return`, a
// single expression (`document.title === "done"`). Any other result, or an error
// (the page may be navigating), means "not yet". The error names what and the last
// result, so a failed wait explains itself. Give ctx a deadline.
func (s *Session) Await(ctx context.Context, what, script string, args ...any) error {
	body := script
	if !returnStatement.MatchString(script) {
		body = "return (" + strings.TrimRight(strings.TrimSpace(script), ";") + ");"
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := "none yet"
	for {
		v, err := s.Execute(ctx, body, args...)
		switch {
		case err == nil && string(bytes.TrimSpace(v)) == "true":
			return nil
		case errors.Is(err, ErrClosed):
			return fmt.Errorf("await %s: %w", what, err)
		case ctx.Err() != nil:
			// The command was cut by ctx: keep the last real result for the message.
		case err != nil:
			last = "error: " + err.Error()
		default:
			last = fmt.Sprintf("returned %.200s", v)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("await %s: %w; last result: %s", what, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// Screenshot returns a PNG image of the visible part of the page: the viewport,
// Options.Width×Height pixels.
func (s *Session) Screenshot(ctx context.Context) ([]byte, error) {
	var b64 string
	if err := s.command(ctx, http.MethodGet, "/screenshot", nil, &b64); err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	png, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("screenshot: decoding base64: %w", err)
	}
	return png, nil
}

// LogEntry is one message of the browser's console log.
type LogEntry struct {
	// Level is "SEVERE" for the entries ConsoleErrors returns.
	Level string `json:"level"`
	// Message is the script's location (a URL, or the source for scripts without
	// one) and line:column, then the text, e.g. `javascript 2:80 Uncaught Error: boom`
	// or `console-api 2:32 "boom"` (a console.error whose argument was "boom").
	Message string `json:"message"`
	// Source is "javascript" (uncaught exceptions), "console-api" (console.error),
	// "network" (failed loads), among others.
	Source string `json:"source"`
	// Timestamp is in milliseconds since the Unix epoch.
	Timestamp int64 `json:"timestamp"`
}

// ConsoleErrors returns the SEVERE console entries (uncaught exceptions, console.error,
// failed resource loads) logged since the previous call, oldest first.
//
// Pitfall: chromedriver hands each entry out once; a second call returns only newer
// ones. This uses chromedriver's legacy log endpoint (POST /se/log), which W3C
// WebDriver does not define.
func (s *Session) ConsoleErrors(ctx context.Context) ([]LogEntry, error) {
	var entries []LogEntry
	if err := s.command(ctx, http.MethodPost, "/se/log", map[string]string{"type": "browser"}, &entries); err != nil {
		return nil, fmt.Errorf("console errors: %w", err)
	}
	return entries, nil
}
