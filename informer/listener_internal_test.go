package informer

import (
	"log/slog"
	"testing"
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
