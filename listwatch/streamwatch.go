package listwatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeinternals/informers/reflector"
)

// streamWatch is the Watch of one HTTP watch response: a goroutine reads frames from
// the body, decodes them and hands them to the consumer over result. With a decoding
// concurrency above 1 (a watch-list, concurrentdecode.go) that goroutine only reads,
// and others decode.
//
// client-go: apimachinery/pkg/watch/streamwatcher.go StreamWatcher
type streamWatch[T reflector.Object] struct {
	result   chan reflector.Event[T] // closed by receive as it returns
	done     chan struct{}           // closed by Stop
	exited   chan struct{}           // closed by receive as it returns
	stopOnce sync.Once               // guards close(done)
	cancel   context.CancelFunc      // cancels the HTTP request, which unblocks a body read
	body     io.ReadCloser           // owned by receive
	logger   *slog.Logger
}

// startStreamWatch starts decoding body with the given number of decoding goroutines
// (1: the reading goroutine decodes). cancel must cancel the request body belongs to.
func startStreamWatch[T reflector.Object](body io.ReadCloser, cancel context.CancelFunc, c *codec[T], logger *slog.Logger, concurrency int) *streamWatch[T] {
	w := &streamWatch[T]{
		result: make(chan reflector.Event[T]),
		done:   make(chan struct{}),
		exited: make(chan struct{}),
		cancel: cancel,
		body:   body,
		logger: logger,
	}
	// Goroutine owned by this streamWatch: it exits when the body ends (the server
	// closed the watch, or the connection broke) or when Stop cancels the request,
	// after the decoding goroutines it started, if any, have exited.
	if concurrency > 1 {
		go w.receiveConcurrently(c, concurrency)
	} else {
		go w.receive(c)
	}
	return w
}

// ResultChan implements Watch.
func (w *streamWatch[T]) ResultChan() <-chan reflector.Event[T] { return w.result }

// Stop implements Watch. It returns once the decoding goroutines have exited.
func (w *streamWatch[T]) Stop() {
	w.stopOnce.Do(func() {
		close(w.done)
		w.cancel()
	})
	<-w.exited
}

// receive is the body of the goroutine that reads and decodes, one frame at a time.
func (w *streamWatch[T]) receive(c *codec[T]) {
	defer close(w.exited)
	defer close(w.result)
	defer w.cancel()
	frames := newFrameReader(c.framer, w.body)
	defer frames.frames.Close()
	for {
		frame, last, ok := w.nextFrame(frames)
		if !ok {
			if last != nil {
				w.send(*last)
			}
			return
		}
		if !w.deliver(c.decodeEvent(frame)) {
			return
		}
	}
}

// nextFrame reads the next frame, skipping (and logging) frames over maxFrameBytes.
// ok is false when the stream has ended; last is then the ERROR event to send before
// closing the channel, or nil for a normal end.
func (w *streamWatch[T]) nextFrame(frames *frameReader) (frame []byte, last *reflector.Event[T], ok bool) {
	for {
		frame, err := frames.next()
		switch {
		case err == nil:
			return frame, nil, true
		case errors.Is(err, errFrameTooLarge):
			w.logger.Warn("skipping watch event", "err", err)
			continue
		case w.stopped(), errors.Is(err, io.EOF), errors.Is(err, context.Canceled):
			// Normal end: the server closed the watch (its timeout), or we stopped it.
			return nil, nil, false
		case utilnet.IsProbableEOF(err) || utilnet.IsTimeout(err):
			w.logger.Debug("watch stream ended", "err", err)
			return nil, nil, false
		default:
			// Pitfall: a stream whose framing is broken (a JSON syntax error) cannot be
			// re-synchronised, so unlike an undecodable object this ends the watch,
			// with the 500 status client-go reports for it.
			return nil, &reflector.Event[T]{Type: watch.Error, Status: undecodableStatus(fmt.Errorf("unable to decode an event from the watch stream: %w", err))}, false
		}
	}
}

// deliver hands a decoded event to the consumer, or logs and skips an event that did
// not decode; false if the watch was stopped first.
func (w *streamWatch[T]) deliver(ev reflector.Event[T], err error) bool {
	if err != nil {
		var de *DecodeError
		if errors.As(err, &de) {
			w.logger.Warn("skipping watch event", "key", de.Key, "eventType", string(de.EventType), "err", de.Err)
		}
		return true
	}
	return w.send(ev)
}

// send hands ev to the consumer; false if the watch was stopped first.
func (w *streamWatch[T]) send(ev reflector.Event[T]) bool {
	select {
	case w.result <- ev:
		return true
	case <-w.done:
		return false
	}
}

func (w *streamWatch[T]) stopped() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}
