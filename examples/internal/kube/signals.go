package kube

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// SignalContext returns a context that is cancelled on the first SIGINT or SIGTERM; a
// second signal exits the process with status 1. Call the returned stop function (defer
// it) to release the signal handler.
//
// Why two stages: the first signal starts a graceful shutdown (stop taking work, let
// workers finish their item); if that hangs, the user presses Ctrl-C again and gets out.
// This is what sample-controller's pkg/signals does, and what kubectl users expect.
//
// Pitfall: after stop, the signals are no longer caught, so a later SIGTERM kills the
// process the default way. Call stop only when the program is about to return.
func SignalContext(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	return notifyContext(parent, func() { os.Exit(1) }, os.Interrupt, syscall.SIGTERM)
}

// notifyContext is SignalContext with the second-signal action and the signals injected,
// so a test can use a harmless signal and observe the "exit".
func notifyContext(parent context.Context, onSecond func(), sigs ...os.Signal) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	// Why buffer 2: signal.Notify never blocks; a full channel drops the signal, and we
	// want to see both the first and the second.
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})

	// Goroutine owned by the returned stop function: it waits for the first signal
	// (cancel), then the second (onSecond). It exits when stop closes done, or after the
	// second signal.
	go func() {
		select {
		case <-ch:
			cancel()
		case <-done:
			return
		}
		select {
		case <-ch:
			onSecond()
		case <-done:
		}
	}()

	var once sync.Once
	stop := func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel()
		})
	}
	return ctx, stop
}
