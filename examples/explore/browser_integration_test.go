//go:build !replayonly

package main

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/foo-controller/controller"
	"github.com/kubeinternals/informers/internal/testrig/browser"
)

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
// order, and takes the screenshot. It switches to the classic pipeline and checks the
// label, the queue and reflector boxes and the journey's mark follow, presses "Repeat
// last action" and checks the repeated create's journey went through the DeltaFIFO.
// Then it presses "Cut the watch" and checks the reflector box shows the new watch.
// It leaves the explorer on the classic pipeline.
//
// Why it matters to server.go's checks: these are the only requests with a real
// browser's Sec-Fetch-Site and Origin — a navigation (none), the EventSource, the
// journey fetches and the actions' POSTs (same-origin) — so a check that refused the
// page's own requests fails here.
func testInBrowser(t *testing.T, x *explorer) {
	b := browser.ForTest(t)
	// Why 5 minutes: a switch waits for the old controller's workers to finish the key
	// in hand (its drain), then for the new caches.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
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
	boxes, err := b.Text(ctx, "#journey-boxes")
	require.NoError(t, err)
	assert.NotContains(t, boxes, "deployments", "the Foo's journey has none of its same-named Deployment's boxes")
	for i, box := range []string{"reflector:foos", "queue:foos", "indexer:foos", "handler:enqueueFoo", "workqueue", "workers"} {
		got, err := b.Text(ctx, `[data-box="`+box+`"] .step`)
		require.NoError(t, err)
		assert.Equal(t, strconv.Itoa(i+1), got, "%s is step %d of the journey", box, i+1)
	}
	require.NoError(t, b.Await(ctx, "the timeline to show the Foo's journey",
		`[...document.querySelectorAll("#events li .text")].some(e => e.textContent.includes("reconciled explore/`+browserFoo+`"))`))

	require.NoError(t, b.Await(ctx, "the plots to draw the workqueue and the handlers' backlogs, with the create marked", `
return document.querySelector('svg.plot[data-group="workqueue"] path.series[data-series="workqueue"]') !== null &&
  document.querySelector('svg.plot[data-group="backlog"] path.series[data-series="backlog:enqueueFoo"]') !== null &&
  [...document.querySelectorAll('svg.plot rect.mark-hit.change title')].some((t) => t.textContent.includes("Create Foo (name `+browserFoo+`"));`))

	screenshot(ctx, t, b, "explorer.png")

	// Why before the cut: "repeat" runs the last action, which must be the create.
	switchAndRepeat(ctx, t, b)

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

// switchAndRepeat checks the page names the default pipeline and shows its boxes,
// clicks "Switch to classic" and checks the label, the boxes and the followed journey
// follow, then clicks "Repeat last action on this pipeline" and checks the repeated
// create (under a fresh name: the first Foo exists) went through the DeltaFIFO.
func switchAndRepeat(ctx context.Context, t *testing.T, b *browser.Session) {
	const (
		nowIs    = `document.querySelector("#pipeline-now").textContent === "pipeline: " + arguments[0]`
		fieldIs  = `document.querySelector('[data-box="' + arguments[0] + '"] [data-field="' + arguments[1] + '"]').textContent`
		resultIs = `document.querySelector("#result").className === "ok" && document.querySelector("#result").textContent.includes(arguments[0])`
	)
	require.NoError(t, b.Await(ctx, "the page to name the default pipeline", nowIs, labelOf(controller.DefaultPipeline, 0).Text))
	for _, box := range []string{"foos", "deployments"} {
		require.NoError(t, b.Await(ctx, box+"'s queue to be a RealFIFO, filled by a watch-list",
			fieldIs+` === "RealFIFO" && document.querySelector('[data-box="reflector:' + arguments[2] + '"] [data-field="filledBy"]').textContent === "watch-list"`,
			"queue:"+box, "kind", box))
	}
	require.NoError(t, b.Await(ctx, "the running pipeline's button to be off, the other's on",
		`document.querySelector("#pipeline-default").disabled && !document.querySelector("#pipeline-classic").disabled`))
	require.NoError(t, b.Await(ctx, "the repeat button to name the create",
		`!document.querySelector("#repeat-last").disabled && document.querySelector("#last-action").textContent === arguments[0]`,
		"Last action: Create Foo (name "+browserFoo+", replicas 1)."))

	require.NoError(t, b.Click(ctx, "#pipeline-classic"))
	require.NoError(t, b.Await(ctx, "the switch's result", resultIs, "started it on the classic one"))
	require.NoError(t, b.Await(ctx, "the page to name the classic pipeline", nowIs, labelOf(controller.ClassicPipeline, 0).Text))
	for _, box := range []string{"foos", "deployments"} {
		require.NoError(t, b.Await(ctx, box+"'s boxes to be the new controller's: a DeltaFIFO, filled by one LIST",
			fieldIs+` === "DeltaFIFO" && ["LIST", "paged LIST"].includes(document.querySelector('[data-box="reflector:' + arguments[2] + '"] [data-field="filledBy"]').textContent) &&
  document.querySelector('[data-box="reflector:' + arguments[2] + '"] [data-field="lists"]').textContent === "1"`,
			"queue:"+box, "kind", box))
	}
	require.NoError(t, b.Await(ctx, "the switch's buttons to have swapped",
		`!document.querySelector("#pipeline-default").disabled && document.querySelector("#pipeline-classic").disabled`))
	require.NoError(t, b.Await(ctx, "the followed Foo's journey to mark the switch, then go through the DeltaFIFO's Replace", `
const rows = [...document.querySelectorAll("#events li")];
const mark = rows.findIndex((li) => li.dataset.stage === "explorer" && li.textContent.includes("on the classic pipeline"));
return mark >= 0 && rows.slice(mark).some((li) => li.dataset.stage === "deltafifo");`))

	require.NoError(t, b.Click(ctx, "#repeat-last"))
	fresh := browserFoo + "-classic"
	require.NoError(t, b.Await(ctx, "the repeat's result", resultIs, "created Foo "+namespace+"/"+fresh))
	require.NoError(t, b.Await(ctx, "the page to follow the repeated create's Foo",
		`document.querySelector("#filter").value === arguments[0]`, namespace+"/"+fresh))
	want := "reflector:foos → queue:foos → indexer:foos → handler:enqueueFoo → workqueue → workers"
	require.NoError(t, b.Await(ctx, "the repeated create's journey to light the Foo's boxes in order",
		`document.querySelector("#journey-boxes").textContent.startsWith(arguments[0])`, want))
	require.NoError(t, b.Await(ctx, "its timeline to go through the DeltaFIFO, not the RealFIFO, to a reconcile", `
const rows = [...document.querySelectorAll("#events li")];
return rows.some((li) => li.dataset.stage === "deltafifo") && !rows.some((li) => li.dataset.stage === "realfifo") &&
  rows.some((li) => li.textContent.includes("reconciled " + arguments[0]));`, namespace+"/"+fresh))
	// The boxes count from the switch: the LIST's one Foo, then the repeated create.
	require.NoError(t, b.Await(ctx, "the new controller's boxes to count the repeated create on top of its LIST", `
const n = (box, field) => Number(document.querySelector('[data-box="' + box + '"] [data-field="' + field + '"]').textContent);
return n("reflector:foos", "watchEvents") >= 1 && n("queue:foos", "queued") >= 2 && n("handler:enqueueFoo", "calls") >= 2 &&
  n("indexer:foos", "objects") >= 2 && n("workers", "reconciles") >= 2;`))
	require.NoError(t, b.Await(ctx, "the workers box to show that the new controller holds the Lease and renews it", `
const f = (field) => document.querySelector('[data-box="workers"] [data-field="' + field + '"]').textContent;
return f("lease").includes("acquired default/foo-controller-explore") && Number(f("renewals")) >= 1;`))
	screenshot(ctx, t, b, "explorer-classic.png")
}
