package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/internal/browser"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "write the browser test's screenshot to docs/images/explorer.png")

// browserFoo is the Foo the browser test creates.
const browserFoo = "from-the-browser"

// counters are the numbers the browser test expects "create Foo" to move, read from
// the page's boxes.
const countersScript = `
const n = (box, field) => Number(document.querySelector('[data-box="' + box + '"] [data-field="' + field + '"]').textContent);
return {
  watchEvents: n("reflector:foos", "watchEvents"),
  queued: n("queue:foos", "queued"),
  objects: n("indexer:foos", "objects"),
  applied: n("indexer:foos", "applied"),
  calls: n("handler:enqueueFoo", "calls"),
  adds: n("workqueue", "adds"),
  reconciles: n("workers", "reconciles"),
  watches: n("reflector:foos", "watches"),
  lists: n("reflector:foos", "lists"),
};`

type counters struct {
	WatchEvents, Queued, Objects, Applied, Calls, Adds, Reconciles, Watches, Lists int
}

// testInBrowser drives the page in headless Chromium: it presses "Create Foo", checks
// that every box on the Foo's way counted it and that the journey lights them in
// order, takes the screenshot, presses "Cut the watch" and checks the reflector box
// shows the new watch.
//
// Why it matters to server.go's checks: these are the only requests with a real
// browser's Sec-Fetch-Site and Origin — a navigation (none), the EventSource, the
// journey fetches and the actions' POSTs (same-origin) — so a check that refused the
// page's own requests fails here.
func testInBrowser(t *testing.T, x *explorer) {
	b := browser.ForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	require.NoError(t, b.Navigate(ctx, x.URL))
	require.NoError(t, b.Await(ctx, "the stream to connect", `document.querySelector("#conn").textContent === "live"`))
	require.NoError(t, b.Await(ctx, "the Foo reflector box to say WATCH",
		`document.querySelector('[data-box="reflector:foos"] [data-field="phase"]').textContent === "WATCH"`))
	read := func() counters {
		raw, err := b.Execute(ctx, countersScript)
		require.NoError(t, err)
		var c counters
		require.NoError(t, json.Unmarshal(raw, &c))
		return c
	}
	before := read()

	require.NoError(t, b.SetValue(ctx, "#in-name", browserFoo))
	require.NoError(t, b.SetValue(ctx, "#in-replicas", "1"))
	require.NoError(t, b.Click(ctx, "#act-create-foo"))
	require.NoError(t, b.Await(ctx, "the action's result", `document.querySelector("#result").className === "ok"`))

	moved := `const c = (function(){` + countersScript + `})(); const b = arguments[0];
return c.watchEvents > b.WatchEvents && c.queued > b.Queued && c.objects > b.Objects && c.applied > b.Applied &&
  c.calls > b.Calls && c.adds > b.Adds && c.reconciles > b.Reconciles;`
	require.NoError(t, b.Await(ctx, "the reflector, queue, indexer, handler, workqueue and workers boxes to count the Foo", moved, before))

	want := "reflector:foos → queue:foos → indexer:foos → handler:enqueueFoo → workqueue → workers"
	require.NoError(t, b.Await(ctx, "the journey to light the Foo's boxes in order",
		`document.querySelector("#journey-boxes").textContent.startsWith(arguments[0])`, want))
	for i, box := range []string{"reflector:foos", "queue:foos", "indexer:foos", "handler:enqueueFoo", "workqueue", "workers"} {
		got, err := b.Text(ctx, `[data-box="`+box+`"] .step`)
		require.NoError(t, err)
		assert.Equal(t, strconv.Itoa(i+1), got, "%s is step %d of the journey", box, i+1)
	}
	require.NoError(t, b.Await(ctx, "the timeline to show the Foo's journey",
		`[...document.querySelectorAll("#events li .text")].some(e => e.textContent.includes("reconciled explore/`+browserFoo+`"))`))

	png, err := b.Screenshot(ctx)
	require.NoError(t, err)
	shot := filepath.Join(t.TempDir(), "explorer.png")
	if *updateScreenshot {
		shot = "../../docs/images/explorer.png"
	}
	require.NoError(t, os.WriteFile(shot, png, 0o644))
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))

	atCut := read()
	require.NoError(t, b.Click(ctx, "#act-cut-watch"))
	require.NoError(t, b.Await(ctx, "the reflector box to show the re-watch", `
const box = '[data-box="reflector:foos"] ';
const n = (f) => Number(document.querySelector(box + '[data-field="' + f + '"]').textContent);
return n("watches") > arguments[0].Watches && document.querySelector(box + '[data-field="phase"]').textContent === "WATCH" &&
  document.querySelector(box + '[data-field="lastWatchEnd"]').textContent !== "—";`, atCut))
	assert.Equal(t, atCut.Lists, read().Lists, "a cut watch is resumed, not relisted")

	errs, err := b.ConsoleErrors(ctx)
	require.NoError(t, err)
	assert.Empty(t, errs, "the page logged no JavaScript errors")
}
