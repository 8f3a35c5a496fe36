package kube

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Why no synctest here: signals are delivered by the runtime's signal goroutine, which
// lives outside any bubble. The timeouts below only bound a failure; they never pace the
// test.
const signalWait = 10 * time.Second

func TestNotifyContext(t *testing.T) {
	t.Run("the first signal cancels the context and does not exit", func(t *testing.T) {
		exited := make(chan struct{}, 1)
		ctx, stop := notifyContext(context.Background(), func() { exited <- struct{}{} }, syscall.SIGUSR1)
		defer stop()

		require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGUSR1))
		select {
		case <-ctx.Done():
		case <-time.After(signalWait):
			t.Fatal("context not cancelled by the first signal")
		}
		assert.Empty(t, exited, "first signal must not exit")
	})

	t.Run("the second signal calls the exit action", func(t *testing.T) {
		exited := make(chan struct{}, 1)
		ctx, stop := notifyContext(context.Background(), func() { exited <- struct{}{} }, syscall.SIGUSR1)
		defer stop()

		require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGUSR1))
		<-ctx.Done()
		require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGUSR1))
		select {
		case <-exited:
		case <-time.After(signalWait):
			t.Fatal("second signal did not call the exit action")
		}
	})

	t.Run("stop cancels the context and is safe to call twice", func(t *testing.T) {
		ctx, stop := notifyContext(context.Background(), func() { t.Error("exit called") }, syscall.SIGUSR1)
		require.NoError(t, ctx.Err())
		stop()
		stop()
		require.ErrorIs(t, ctx.Err(), context.Canceled)
	})

	t.Run("cancelling the parent cancels the child", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		ctx, stop := notifyContext(parent, func() {}, syscall.SIGUSR1)
		defer stop()
		cancel()
		require.ErrorIs(t, ctx.Err(), context.Canceled)
	})
}

func TestSignalContextIsLiveUntilASignalOrStop(t *testing.T) {
	ctx, stop := SignalContext(context.Background())
	require.NoError(t, ctx.Err())
	stop()
	require.ErrorIs(t, ctx.Err(), context.Canceled)
}
