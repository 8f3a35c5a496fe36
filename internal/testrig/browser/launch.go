package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// chromiumFlags are passed to every chromium; doc.go says what each is for.
var chromiumFlags = []string{
	"--headless",
	"--no-sandbox",
	"--disable-gpu",
	"--disable-quic",
	"--no-first-run",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
}

// Options configures Launch. The zero value is a 1280×900 viewport, binaries from Find,
// and a 20 s bound on chromedriver's start.
type Options struct {
	// Width and Height are the size of the page's viewport, and so of screenshots, in
	// CSS pixels; 0 means 1280 and 900. (The window is larger by its frame.)
	Width, Height int
	// Chromium and Chromedriver are the executables; "" means what Find returns.
	Chromium, Chromedriver string
	// Args are extra chromium flags, appended after the fixed ones.
	Args []string
	// ReadyTimeout bounds the wait for chromedriver to answer /status as ready
	// (default 20s); ctx bounds the whole Launch as well.
	ReadyTimeout time.Duration
}

// Session is one headless chromium driven through its own chromedriver. Its methods
// may be called from several goroutines (chromedriver runs one command at a time per
// session); after Close they return an error wrapping ErrClosed.
type Session struct {
	// Version is the browser version chromedriver reported, for logs.
	Version string

	id     string // WebDriver session id; "" until the session exists
	wd     *client
	driver *driver
	dir    string // temporary directory: profile/ (--user-data-dir) and home/ ($HOME)

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// Launch starts chromedriver on a free loopback port and a new headless chromium
// session through it. On any failure it leaves nothing behind (no process, no
// directory) and its error includes the tail of chromedriver's output. Binaries that
// are not installed give an error wrapping ErrNoBrowser. The caller must Close the
// Session.
func Launch(ctx context.Context, opts Options) (*Session, error) {
	chromium, chromedriver := opts.Chromium, opts.Chromedriver
	var err error
	if chromium == "" {
		if chromium, err = findOne("chromium", ChromiumEnv); err != nil {
			return nil, err
		}
	}
	if chromedriver == "" {
		if chromedriver, err = findOne("chromedriver", ChromedriverEnv); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "kubeinternals-browser-")
	if err != nil {
		return nil, fmt.Errorf("creating the browser's temporary directory: %w", err)
	}
	home := filepath.Join(dir, "home")
	port, err := freePort()
	if err == nil {
		err = os.Mkdir(home, 0o700)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	d, err := startDriver(chromedriver, port, home)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s := &Session{wd: newClient("http://127.0.0.1:" + strconv.Itoa(port)), driver: d, dir: dir}
	if err = s.waitReady(ctx, opts.ReadyTimeout); err == nil {
		err = s.create(ctx, chromium, opts)
	}
	if err != nil {
		err = fmt.Errorf("%w\nchromedriver's last output:\n%s", err, d.out.Tail(20))
		if cerr := s.Close(); cerr != nil {
			err = fmt.Errorf("%w\ncleaning up: %v", err, cerr)
		}
		return nil, err
	}
	return s, nil
}

// waitReady polls chromedriver's /status until it reports ready, chromedriver exits,
// or timeout (default 20s) or ctx ends.
func (s *Session) waitReady(ctx context.Context, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = 20 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if err := s.driver.exited(); err != nil {
			return err
		}
		var status struct {
			Ready   bool   `json:"ready"`
			Message string `json:"message"`
		}
		err := s.wd.call(ctx, http.MethodGet, "/status", "GET /status", nil, &status)
		if err == nil && status.Ready {
			return nil
		}
		if ctx.Err() == nil {
			last = err
			if err == nil {
				last = fmt.Errorf("not ready: %s", status.Message)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for chromedriver to be ready: %w; last answer: %v", ctx.Err(), last)
		case <-s.driver.done:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// create makes the WebDriver session, which starts chromium with chromiumFlags and a
// fresh profile directory, and gives the page a w×h viewport.
func (s *Session) create(ctx context.Context, chromium string, opts Options) error {
	w, h := opts.Width, opts.Height
	if w <= 0 {
		w = 1280
	}
	if h <= 0 {
		h = 900
	}
	args := append([]string{}, chromiumFlags...)
	args = append(args,
		"--user-data-dir="+filepath.Join(s.dir, "profile"),
		fmt.Sprintf("--window-size=%d,%d", w, h))
	args = append(args, opts.Args...)
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"goog:chromeOptions": map[string]any{"binary": chromium, "args": args},
		// Why: without it chromedriver keeps no browser log and ConsoleErrors has
		// nothing to read; SEVERE is the level of uncaught errors and console.error.
		"goog:loggingPrefs": map[string]string{"browser": "SEVERE"},
	}}}
	var created struct {
		SessionID    string `json:"sessionId"`
		Capabilities struct {
			BrowserVersion string `json:"browserVersion"`
		} `json:"capabilities"`
	}
	if err := s.wd.call(ctx, http.MethodPost, "/session", "POST /session", caps, &created); err != nil {
		return fmt.Errorf("creating a browser session (chromium %s): %w", chromium, err)
	}
	if created.SessionID == "" {
		return errors.New("creating a browser session: the answer has no sessionId")
	}
	s.id, s.Version = created.SessionID, created.Capabilities.BrowserVersion
	return s.fitViewport(ctx, w, h)
}

// fitViewport resizes the window so that the page's viewport, and so every
// screenshot, is exactly w×h CSS pixels.
//
// Pitfall: headless chromium still lays out a window frame: --window-size=1280,900
// gives a 1280×757 viewport. The frame's size is measured from the page and added.
func (s *Session) fitViewport(ctx context.Context, w, h int) error {
	var frame, viewport [2]int
	if err := s.evaluate(ctx, "return [outerWidth - innerWidth, outerHeight - innerHeight]", &frame); err != nil {
		return fmt.Errorf("measuring the window frame: %w", err)
	}
	if frame != [2]int{} {
		rect := map[string]int{"width": w + frame[0], "height": h + frame[1]}
		if err := s.command(ctx, http.MethodPost, "/window/rect", rect, nil); err != nil {
			return fmt.Errorf("resizing the window to a %dx%d viewport: %w", w, h, err)
		}
	}
	if err := s.evaluate(ctx, "return [innerWidth, innerHeight]", &viewport); err != nil {
		return fmt.Errorf("measuring the viewport: %w", err)
	}
	if viewport != [2]int{w, h} {
		return fmt.Errorf("the viewport is %dx%d after resizing, want %dx%d", viewport[0], viewport[1], w, h)
	}
	return nil
}

// evaluate runs script like Execute and decodes its result into out.
func (s *Session) evaluate(ctx context.Context, script string, out any) error {
	raw, err := s.Execute(ctx, script)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decoding %.200s: %w", raw, err)
	}
	return nil
}

// Close ends the session and leaves nothing behind: it deletes the WebDriver session
// (chromedriver then quits chromium), kills chromedriver's process group, kills any
// remaining process of this session, and removes the temporary directory. It returns
// an error only if a process survives or the directory cannot be removed. Safe to call
// more than once and concurrently; later calls return the first call's result.
func (s *Session) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.shutdown() })
	return s.closeErr
}

// shutdown does Close's work once.
func (s *Session) shutdown() error {
	s.closed.Store(true)
	if s.id != "" {
		// Why ask first: chromedriver then closes chromium in order and reaps it; the
		// kills below are for a chromedriver or chromium that no longer answers.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = s.wd.call(ctx, http.MethodDelete, "/session/"+s.id, "DELETE /session", nil, nil)
		cancel()
	}
	s.driver.stop()
	s.wd.http.CloseIdleConnections()
	var errs []error
	if err := sweep(s.dir, 5*time.Second); err != nil {
		errs = append(errs, fmt.Errorf("stopping chromium: %w", err))
	}
	if err := os.RemoveAll(s.dir); err != nil {
		errs = append(errs, fmt.Errorf("removing the browser's temporary directory: %w", err))
	}
	return errors.Join(errs...)
}
