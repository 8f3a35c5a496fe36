// Package browser drives a real headless Chromium from Go tests, with the standard
// library only: it starts Debian's chromedriver (package chromium-driver) on a free
// loopback port and speaks the W3C WebDriver protocol to it, which starts and
// controls Debian's chromium.
//
// Why WebDriver over chromedriver rather than the DevTools protocol: WebDriver is plain
// HTTP requests with JSON bodies (net/http and encoding/json are enough), while
// DevTools needs a websocket client, which the standard library lacks. WebDriver's
// commands are also the user's actions (a click is a real mouse click that fails on a
// covered button), which is what a browser test should exercise.
//
// Why these chromium flags (chromiumFlags in launch.go):
//   - --headless: no display on a test machine.
//   - --no-sandbox: tests run as root, and Chromium refuses to sandbox as root.
//   - --disable-gpu: no GPU; software rendering is enough for screenshots.
//   - --disable-quic, --disable-background-networking, --disable-component-update,
//     --disable-sync: this machine has no network, and Chromium otherwise contacts
//     Google's hosts at start (component updates, field trials, sync, QUIC probes),
//     which stalls or fails the start. Nothing may leave loopback.
//   - --no-first-run: no first-run dialogs or default-browser checks.
//   - --user-data-dir=<fresh temporary directory>: an empty profile for each session,
//     so no state leaks between tests and two sessions never share a profile lock.
//   - --window-size: the window starts near its final size; Launch then grows it by
//     the frame headless chromium still draws, so that the viewport, and so every
//     screenshot, is exactly Options.Width×Height (1280×900 by default).
//
// Chromium also gets its own $HOME inside the session's temporary directory, so its
// crash database and caches do not land in the real home directory.
//
// Reading order: find.go (where the binaries are, ErrNoBrowser), launch.go (Launch,
// Options, Close), process.go (the chromedriver process and cleanup), wire.go (one
// WebDriver command over HTTP, Error, Element), session.go (the commands: Navigate,
// Find, Click, SetValue, Text, Value, Execute, Await, Screenshot, ConsoleErrors),
// testing.go (ForTest).
//
// Invariant: after Close, or after a failed Launch, no process of the session is left
// (chromedriver's process group is killed, and any process whose arguments name the
// session's directory, such as chromium's crash handlers, which leave that group) and
// the temporary directory is removed. ForTest registers Close with t.Cleanup and fails
// the test if Close could not ensure this. Chromedriver also gets SIGKILL from the
// kernel if the test binary dies (Pdeathsig).
package browser
