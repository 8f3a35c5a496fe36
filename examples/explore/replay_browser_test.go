package main

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/internal/testrig/browser"
	"github.com/kubeinternals/informers/trace"
)

// replayedFile is the recording the replay's browser test plays: a watch cut, a
// compaction, a 410, a relist that infers a deletion — marks on the plots, and a
// journey that ends in a tombstone.
const replayedFile = "../../docs/recordings/compaction-410.jsonl.gz"

// TestReplayInTheBrowser drives the replay page in headless Chromium: step, play and
// pause, speed, the scrubber forwards and back, a click on a plot's relist mark and
// one on the curve that show the events of that moment, a journey followed from a row,
// the actions gone with the reason; then it takes the screenshot. No cluster:
// it needs only Chromium (KUBEINTERNALS_REQUIRE_BROWSER=1 in CI).
func TestReplayInTheBrowser(t *testing.T) {
	b := browser.ForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	_, events, err := trace.OpenRecording(replayedFile)
	require.NoError(t, err)
	total := len(events)

	ln, err := listenLoopback("127.0.0.1:0")
	require.NoError(t, err)
	x, err := startReplay(ctx, replayedFile, ln, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	defer func() { assert.NoError(t, x.Stop()) }()

	require.NoError(t, b.Navigate(ctx, x.URL))
	require.NoError(t, b.Await(ctx, "the stream to connect", `document.querySelector("#conn").textContent === "replay"`))
	posIs := `document.querySelector("#replay-pos").textContent.startsWith(arguments[0] + " / ")`
	require.NoError(t, b.Await(ctx, "the player to start at 0", posIs, 0))

	t.Run("the actions are gone, and the page says why", func(t *testing.T) {
		raw, err := b.Execute(ctx, `return document.querySelectorAll("button[data-action], button[data-pipeline], #repeat-last").length;`)
		require.NoError(t, err)
		assert.Equal(t, "0", string(raw))
		text, err := b.Text(ctx, "#actions-off")
		require.NoError(t, err)
		assert.Contains(t, text, "no cluster is behind it")
	})

	t.Run("step plays exactly one event", func(t *testing.T) {
		require.NoError(t, b.Click(ctx, "#replay-step"))
		require.NoError(t, b.Await(ctx, "the player at 1", posIs, 1))
		require.NoError(t, b.Await(ctx, "the timeline to show that one event", `document.querySelectorAll("#events li").length === 1`))
	})

	t.Run("play, then pause, stops where it is", func(t *testing.T) {
		require.NoError(t, setControl(ctx, b, "#replay-speed", "0.25"))
		require.NoError(t, b.Click(ctx, "#replay-play"))
		require.NoError(t, b.Await(ctx, "the play button to offer pause", `document.querySelector("#replay-play").textContent === "pause"`))
		require.NoError(t, b.Await(ctx, "a few events to play", `Number(document.querySelector("#replay-scrub").value) >= 4`))
		require.NoError(t, b.Click(ctx, "#replay-play"))
		require.NoError(t, b.Await(ctx, "the play button to offer play", `document.querySelector("#replay-play").textContent === "play"`))
		assert.False(t, replayOf(t, x).Playing)
		assert.Less(t, replayOf(t, x).Pos, total)
	})

	t.Run("the scrubber jumps forwards and back; the boxes count from the start", func(t *testing.T) {
		require.NoError(t, setControl(ctx, b, "#replay-scrub", strconv.Itoa(total-5)))
		require.NoError(t, b.Await(ctx, "the player near the end", posIs, total-5))
		require.NoError(t, b.Await(ctx, "the page to count every event played", `document.querySelector("#events-total").textContent === String(arguments[0])`, total-5))
		require.NoError(t, setControl(ctx, b, "#replay-scrub", "10"))
		require.NoError(t, b.Await(ctx, "the player back at 10", posIs, 10))
		require.NoError(t, b.Await(ctx, "the page to start over: 10 events, 10 rows",
			`document.querySelector("#events-total").textContent === "10" && document.querySelectorAll("#events li").length === 10`))
		assert.Equal(t, uint64(1), x.state(t).Generation)
	})

	t.Run("played to the end, the plots show the relist and a click on it shows its events", func(t *testing.T) {
		require.NoError(t, setControl(ctx, b, "#replay-speed", "20"))
		require.NoError(t, b.Click(ctx, "#replay-play"))
		require.NoError(t, b.Await(ctx, "the end", `document.querySelector("#replay-play").textContent === "play again"`))
		require.NoError(t, b.Await(ctx, "the queue and backlog plots, with the relist and the faults marked", `
return document.querySelector('svg.plot[data-group="queue"] path.series') !== null &&
  document.querySelector('svg.plot[data-group="backlog"] path.series') !== null &&
  document.querySelector('svg.plot[data-group="queue"] line.mark.relist') !== null &&
  document.querySelectorAll('svg.plot[data-group="queue"] line.mark.fault').length === 2;`))
		require.NoError(t, b.Click(ctx, `svg.plot[data-group="queue"] rect.mark-hit.relist`))
		require.NoError(t, b.Await(ctx, "the timeline to show the relist's moment, the relist picked", `
const picked = document.querySelector("#events li.picked");
return picked !== null && picked.textContent.includes("relist") && picked.textContent.includes("410 Gone");`))

		// A click elsewhere picks the point or mark nearest in time: at the left edge,
		// the scenario's first action, at the recording's start.
		_, err := b.Execute(ctx, `const plot = document.querySelector('svg.plot[data-group="queue"]'); const r = plot.getBoundingClientRect();
const left = plot.querySelector("line.axis").x1.baseVal.value / plot.viewBox.baseVal.width; // where the time axis starts
plot.dispatchEvent(new MouseEvent("click", { bubbles: true, clientX: r.left + r.width * left, clientY: r.top + r.height / 2 })); return true;`)
		require.NoError(t, err)
		require.NoError(t, b.Await(ctx, "the timeline to show the recording's first moment, its first action picked", `
const picked = document.querySelector("#events li.picked");
return picked !== null && picked.textContent.includes("action (change): POST PodTemplates");`))
	})

	t.Run("a journey followed from a row ends in the relist's tombstone", func(t *testing.T) {
		require.NoError(t, b.Click(ctx, "#clear-filter"))
		require.NoError(t, b.Await(ctx, "a row of pt-1 with a follow button", `
return [...document.querySelectorAll("#events li")].some((li) => li.textContent.includes("/pt-1") && li.querySelector("button.key"));`))
		_, err := b.Execute(ctx, `[...document.querySelectorAll("#events li")].find((li) => li.textContent.includes("/pt-1") && li.querySelector("button.key")).querySelector("button.key").click(); return true;`)
		require.NoError(t, err)
		require.NoError(t, b.Await(ctx, "pt-1's journey: its boxes, then the tombstone the relist inferred", `
return document.querySelector("#journey-boxes").textContent.startsWith("reflector:podtemplates") &&
  [...document.querySelectorAll("#events li .text")].some((e) => e.textContent.includes("tombstone: gone from the relist"));`))
	})

	_, err = b.Execute(ctx, `window.scrollTo(0, 0); return true;`)
	require.NoError(t, err)
	screenshot(ctx, t, b, "replay.png")
	errs, err := b.ConsoleErrors(ctx)
	require.NoError(t, err)
	assert.Empty(t, errs, "the page logged no JavaScript errors")
}

// setControl sets an input or select to value and fires its change event, as a
// reader's drag or choice ends.
func setControl(ctx context.Context, b *browser.Session, css, value string) error {
	_, err := b.Execute(ctx, `const el = document.querySelector(arguments[0]); el.value = arguments[1];
el.dispatchEvent(new Event("input", { bubbles: true })); el.dispatchEvent(new Event("change", { bubbles: true })); return true;`, css, value)
	return err
}

// replayOf is the player's state, as GET /state gives it.
func replayOf(t *testing.T, x *explorer) replayState {
	t.Helper()
	s := x.state(t)
	require.NotNil(t, s.Replay, "a replaying explorer's state has the player's")
	return *s.Replay
}
