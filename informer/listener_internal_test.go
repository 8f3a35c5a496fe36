package informer

import (
	"bytes"
	"log/slog"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kubeinternals/informers/internal/fifo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// The listener's buffer is internal/fifo (tested there); what the listener adds is
// the informer's shared pool: a burst to a slow handler is given back block by block,
// and another listener's burst is held in those blocks.
func TestListenerBufferGivesBackTheSpaceOfABurst(t *testing.T) {
	var blocks fifo.Pool[notification[*corev1.ConfigMap]]
	l := newListener[*corev1.ConfigMap](HandlerFuncs[*corev1.ConfigMap]{}, slog.New(slog.DiscardHandler), 0, 0, -1, &blocks)
	for range 100_000 {
		l.add(notification[*corev1.ConfigMap]{kind: addNotification, newObj: &corev1.ConfigMap{}})
	}
	require.GreaterOrEqual(t, l.pending.Cap(), 100_000)
	assert.Equal(t, 100_000, l.highWater)
	for range 100_000 {
		l.pending.Pop()
	}
	assert.Equal(t, fifo.BlockLen, l.pending.Cap(), "a drained buffer keeps one block")
	assert.Equal(t, l.pending.Pool, &blocks, "the listener's blocks come from the informer's pool")
}

func TestDetermineResyncPeriodFollowsClientGo(t *testing.T) {
	cases := []struct {
		name                 string
		desired, check, want int
	}{
		{"a handler that wants none gets none", 0, 5, 0},
		{"an informer that never resyncs gives none", 10, 0, 0},
		{"a period below the check period is raised to it", 3, 5, 5},
		{"a longer period is kept", 10, 5, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.EqualValues(t, c.want, determineResyncPeriod(durationOf(c.desired), durationOf(c.check))/durationOf(1))
		})
	}
}

func durationOf(n int) time.Duration { return time.Duration(n) * time.Second }

// calledFromHandler rests on goroutineID telling goroutines apart; if a Go release
// changed the stack header it reads, this fails before the own-handler check silently
// stops working.
func TestGoroutineIDTellsGoroutinesApart(t *testing.T) {
	mine := goroutineID()
	require.NotZero(t, mine)
	assert.Equal(t, mine, goroutineID(), "the same on the same goroutine")
	other := make(chan uint64)
	go func() { other <- goroutineID() }()
	theirs := <-other
	assert.NotZero(t, theirs)
	assert.NotEqual(t, mine, theirs)
}

// goroutineID reads runtime.Stack's header, "goroutine 42 [running]:". This pins that
// grammar on a test's goroutine, on a goroutine it starts, and in a synctest bubble
// (whose header adds ", synctest bubble N" inside the brackets): a Go release that
// changed it fails here, by name, before ShutDownEventHandler's own-handler check
// quietly stops matching.
func TestTheStackHeaderStillNamesTheGoroutine(t *testing.T) {
	header := regexp.MustCompile(`^goroutine ([1-9][0-9]*) \[`)
	check := func(where string) {
		buf := make([]byte, 128)
		buf = buf[:runtime.Stack(buf, false)]
		m := header.FindSubmatch(buf)
		if !assert.NotNil(t, m, "%s: runtime.Stack's header is %q, not \"goroutine N [...\"", where, bytes.SplitN(buf, []byte("\n"), 2)[0]) {
			return
		}
		want, err := strconv.ParseUint(string(m[1]), 10, 64)
		require.NoError(t, err)
		assert.Equal(t, want, goroutineID(), "%s: goroutineID reads the header's number", where)
	}
	check("the test's goroutine")
	done := make(chan struct{})
	go func() { defer close(done); check("a new goroutine") }()
	<-done
	synctest.Test(t, func(*testing.T) { check("a synctest bubble") })
}

// goroutineIDFrom answers 0, never a wrong id, for a header it does not recognise.
func TestGoroutineIDFromRefusesAnUnknownHeader(t *testing.T) {
	for header, want := range map[string]uint64{
		"goroutine 42 [running]:\nmain.main()":      42,
		"goroutine 7 [running, synctest bubble 3]:": 7,
		"":                         0,
		"goroutine 42":             0,
		"goroutine  42 [running]:": 0,
		"goroutine x [running]:":   0,
		"Goroutine 42 [running]:":  0,
		"goroutine 42 running:":    0,
		"thread 42 [running]:":     0,
		"goroutine -1 [running]:":  0,
	} {
		assert.Equal(t, want, goroutineIDFrom([]byte(header)), "%q", header)
	}
}

// A header run cannot read is logged at error level when the handler's goroutine
// starts, naming the handler, instead of silently disabling the own-handler check.
func TestAnUnreadableStackHeaderIsLoggedWhenTheHandlerStarts(t *testing.T) {
	prev := stackOf
	stackOf = func(buf []byte) int { return copy(buf, "thread 42 [running]:\n") }
	t.Cleanup(func() { stackOf = prev })
	var logs bytes.Buffer
	var blocks fifo.Pool[notification[*corev1.ConfigMap]]
	l := newListener[*corev1.ConfigMap](HandlerFuncs[*corev1.ConfigMap]{}, slog.New(slog.NewTextHandler(&logs, nil)), 0, 0, -1, &blocks)
	l.name = "my handler"
	l.close()
	l.run()
	assert.Contains(t, logs.String(), "level=ERROR")
	assert.Contains(t, logs.String(), "cannot read this goroutine's id")
	assert.Contains(t, logs.String(), `handler="my handler"`)
	assert.False(t, l.calledFromHandler(), "with no id, nothing matches")
}
