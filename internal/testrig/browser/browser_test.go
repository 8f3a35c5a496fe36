package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testPage has a button whose effect is late (so the test must wait for it), an input
// echoed into a span on every input event, and a button covered by an overlay.
const testPage = `<!doctype html>
<html><head><title>browser test</title>
<style>
  #wrap { position: relative; width: 200px; height: 40px; }
  #covered, #overlay { position: absolute; inset: 0; }
  #overlay { background: rgba(0,0,0,0.2); }
</style></head>
<body>
  <button id="go">Go</button> <span id="out">idle</span>
  <p><input id="name"> <span id="echo"></span></p>
  <div id="wrap"><button id="covered">Covered</button><div id="overlay"></div></div>
  <script>
    let clicks = 0;
    document.getElementById("go").addEventListener("click", () => {
      clicks++;
      setTimeout(() => { document.getElementById("out").textContent = "clicked " + clicks; }, 150);
    });
    document.getElementById("name").addEventListener("input", (e) => {
      document.getElementById("echo").textContent = e.target.value;
    });
  </script>
</body></html>`

// serveTestPage serves testPage at / for the duration of the test.
func serveTestPage(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(testPage))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

func TestSessionDrivesAPage(t *testing.T) {
	url := serveTestPage(t)
	s := ForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, s.Navigate(ctx, url))

	t.Run("a click changes the span later; Await waits for it", func(t *testing.T) {
		require.NoError(t, s.Click(ctx, "#go"))
		require.NoError(t, s.Await(ctx, "the click's text", `document.getElementById("out").textContent === "clicked 1"`))
		text, err := s.Text(ctx, "#out")
		require.NoError(t, err)
		require.Equal(t, "clicked 1", text)
	})

	t.Run("a click on an element the page replaced after it was found clicks the new one", func(t *testing.T) {
		replaceGo := func() {
			_, err := s.Execute(ctx, `const old = document.getElementById("go");
const fresh = old.cloneNode(true);
fresh.addEventListener("click", () => { document.getElementById("out").textContent = "clicked the new one"; });
old.replaceWith(fresh);`)
			require.NoError(t, err)
		}
		replaced := false
		require.NoError(t, s.click(ctx, "#go", func() {
			if !replaced { // only between the first find and its click
				replaced = true
				replaceGo()
			}
		}))
		require.NoError(t, s.Await(ctx, "the new button's text", `document.getElementById("out").textContent === "clicked the new one"`))

		replaced = false
		err := s.click(ctx, "#go", func() { replaceGo() }) // replaced before every click
		var werr *Error
		require.ErrorAs(t, err, &werr, "a page that replaces the element every time is reported")
		require.Equal(t, "stale element reference", werr.Code)
	})

	t.Run("SetValue types key events and replaces the previous value", func(t *testing.T) {
		require.NoError(t, s.SetValue(ctx, "#name", "hello"))
		require.NoError(t, s.SetValue(ctx, "#name", "bye"))
		value, err := s.Value(ctx, "#name")
		require.NoError(t, err)
		require.Equal(t, "bye", value)
		echo, err := s.Text(ctx, "#echo")
		require.NoError(t, err)
		require.Equal(t, "bye", echo, "the input handler saw the typed text")
	})

	t.Run("Execute returns JSON and takes values and elements as arguments", func(t *testing.T) {
		title, err := s.Execute(ctx, "return document.title")
		require.NoError(t, err)
		require.JSONEq(t, `"browser test"`, string(title))
		sum, err := s.Execute(ctx, "return arguments[0] + arguments[1]", 2, 3)
		require.NoError(t, err)
		require.JSONEq(t, `5`, string(sum))
		el, err := s.Find(ctx, "#go")
		require.NoError(t, err)
		id, err := s.Execute(ctx, "return arguments[0].id", el)
		require.NoError(t, err)
		require.JSONEq(t, `"go"`, string(id))
	})

	t.Run("a screenshot is a PNG of the viewport's size", func(t *testing.T) {
		img, err := s.Screenshot(ctx)
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(img, []byte("\x89PNG\r\n\x1a\n")), "PNG signature, got % x", img[:min(8, len(img))])
		decoded, err := png.Decode(bytes.NewReader(img))
		require.NoError(t, err)
		require.Equal(t, 1280, decoded.Bounds().Dx())
		require.Equal(t, 900, decoded.Bounds().Dy())
	})

	t.Run("Find of a missing selector is a clear error", func(t *testing.T) {
		_, err := s.Find(ctx, "#missing")
		var werr *Error
		require.ErrorAs(t, err, &werr)
		require.Equal(t, "no such element", werr.Code)
		require.Contains(t, err.Error(), `"#missing"`)
		require.ErrorContains(t, s.Click(ctx, "#missing"), "no such element")
	})

	t.Run("a click is a real click: a covered button cannot be clicked", func(t *testing.T) {
		err := s.Click(ctx, "#covered")
		var werr *Error
		require.ErrorAs(t, err, &werr)
		require.Equal(t, "element click intercepted", werr.Code)
	})

	t.Run("a thrown exception is a javascript error", func(t *testing.T) {
		_, err := s.Execute(ctx, `throw new Error("on purpose")`)
		var werr *Error
		require.ErrorAs(t, err, &werr)
		require.Equal(t, "javascript error", werr.Code)
		require.ErrorContains(t, err, "on purpose")
	})

	t.Run("a failed Await names what it waited for and the last result", func(t *testing.T) {
		short, cancel := context.WithTimeout(ctx, 400*time.Millisecond)
		defer cancel()
		err := s.Await(short, "a title that never comes", "return document.title")
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorContains(t, err, "a title that never comes")
		require.ErrorContains(t, err, `returned "browser test"`)
	})

	t.Run("ConsoleErrors returns console.error and uncaught exceptions", func(t *testing.T) {
		_, err := s.ConsoleErrors(ctx) // drain what earlier subtests logged
		require.NoError(t, err)
		_, err = s.Execute(ctx, `console.error("boom-console"); setTimeout(() => { throw new Error("boom-uncaught"); }, 0);`)
		require.NoError(t, err)
		var seen []string
		require.Eventually(t, func() bool {
			entries, err := s.ConsoleErrors(ctx)
			require.NoError(t, err)
			for _, e := range entries {
				seen = append(seen, e.Source+": "+e.Message)
			}
			joined := strings.Join(seen, "\n")
			return strings.Contains(joined, "boom-console") && strings.Contains(joined, "boom-uncaught")
		}, 10*time.Second, 100*time.Millisecond, "seen: %q", seen)
		t.Logf("console errors: %q", seen)
	})
}

func TestCloseLeavesNothingAndLaterCommandsFail(t *testing.T) {
	s := ForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, s.Navigate(ctx, "about:blank"))
	require.NotEmpty(t, processesMentioning(s.dir+"/"), "chromium runs with the session's directory in its arguments")
	pid := s.driver.cmd.Process.Pid

	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "a second Close is harmless")
	require.Empty(t, processesMentioning(s.dir+"/"), "no chromium process is left")
	require.NoDirExists(t, s.dir)
	require.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "chromedriver (pid %d) has exited and been reaped", pid)

	err := s.Navigate(ctx, "about:blank")
	require.ErrorIs(t, err, ErrClosed)
	_, err = s.Find(ctx, "body")
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, s.Await(ctx, "anything", "true"), ErrClosed)
}

func TestLaunchFailureLeavesNothing(t *testing.T) {
	if _, _, err := Find(); err != nil && os.Getenv(RequireEnv) != "1" {
		t.Skipf("skipping: %v", err)
	}
	before := tempDirs(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Launch(ctx, Options{Chromium: "/bin/false"})
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrNoBrowser)
	require.ErrorContains(t, err, "session not created")
	require.ErrorContains(t, err, "chromedriver's last output")
	require.Equal(t, before, tempDirs(t), "the temporary directory is removed")
}

// tempDirs lists the session directories Launch creates.
func tempDirs(t *testing.T) []string {
	dirs, err := filepath.Glob(filepath.Join(os.TempDir(), "kubeinternals-browser-*"))
	require.NoError(t, err)
	return dirs
}

func TestFindReportsAMissingBrowserAsErrNoBrowser(t *testing.T) {
	t.Setenv(ChromiumEnv, "/nonexistent/chromium")
	_, _, err := Find()
	require.ErrorIs(t, err, ErrNoBrowser)
	require.ErrorContains(t, err, "/nonexistent/chromium")
	require.ErrorContains(t, err, InstallCommand)

	_, err = Launch(context.Background(), Options{})
	require.ErrorIs(t, err, ErrNoBrowser, "Launch starts nothing without a browser")
}

func TestErrorNamesCodeAndFirstLineOfMessage(t *testing.T) {
	err := error(&Error{Command: "POST /element", Status: 404, Code: "no such element",
		Message: "no such element: Unable to locate element\n  (Session info: chrome=1)"})
	require.Equal(t, "webdriver POST /element: no such element (HTTP 404): Unable to locate element", err.Error())
	var werr *Error
	require.True(t, errors.As(err, &werr))
}

func TestElementMarshalsAsAWebElementReference(t *testing.T) {
	data, err := json.Marshal(Element{Selector: "#x", ID: "abc"})
	require.NoError(t, err)
	require.JSONEq(t, `{"element-6066-11e4-a52e-4f735466cecf": "abc"}`, string(data))
}
