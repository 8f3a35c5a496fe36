package main

import (
	"bytes"
	"context"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeinternals/informers/examples/internal/steptest"
)

func TestWorkqueueTimeline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		require.NoError(t, run(t.Context(), slog.New(slog.DiscardHandler), &out))
		t.Logf("program output:\n%s", out.String())
		// Retry delays per key: 100ms, 200ms, 400ms, 800ms, 1.6s (the bucket never binds).
		assert.Equal(t, ""+
			"+0s     added ok, flaky, ok, broken, ok → Len 3: a key already waiting is not queued twice\n"+
			"+0s     ok     ok after 0 retries → Forget (its backoff starts over next time)\n"+
			"+0s     flaky  failed → AddRateLimited (retry 1)\n"+
			"+0s     broken failed → AddRateLimited (retry 1)\n"+
			"+100ms  flaky  failed → AddRateLimited (retry 2)\n"+
			"+100ms  broken failed → AddRateLimited (retry 2)\n"+
			"+300ms  flaky  failed → AddRateLimited (retry 3)\n"+
			"+300ms  broken failed → AddRateLimited (retry 3)\n"+
			"+700ms  flaky  ok after 3 retries → Forget (its backoff starts over next time)\n"+
			"+700ms  broken failed → AddRateLimited (retry 4)\n"+
			"+1.5s   broken failed → AddRateLimited (retry 5)\n"+
			"+3.1s   broken failed 5 retries → give up: Forget, do not re-add\n"+
			"+3.1s   queue empty: Len 0\n", out.String())
	})
}

func TestWorkqueueStopsWhenTheContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		var out bytes.Buffer
		err := run(ctx, slog.New(slog.DiscardHandler), &out)
		// Pitfall avoided: without the goroutine that shuts the queue down, Get would
		// block forever on "broken"'s pending retry and this test would deadlock.
		assert.ErrorIs(t, err, ctx.Err())
	})
}

// TestREADMESample checks that the README's sample output is the program's output but
// for the times, which a real run's timers make a millisecond or so later.
func TestREADMESample(t *testing.T) {
	sample := steptest.Sample(t, "README.md", "`go run` printed")
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		require.NoError(t, run(t.Context(), slog.New(slog.DiscardHandler), &out))
		assert.Equal(t, withoutTimes(sample), withoutTimes(strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")))
	})
}

// withoutTimes drops the "+1.502s " column from each line.
func withoutTimes(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = timeColumn.ReplaceAllString(l, "")
	}
	return out
}

var timeColumn = regexp.MustCompile(`^\+\S+\s+`)
