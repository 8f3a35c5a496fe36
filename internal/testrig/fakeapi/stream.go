package fakeapi

import (
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeinternals/informers/reflector"
)

// streamBuffer is how many events a watch holds before the server's writes wait for
// the consumer — the back-pressure of a real connection.
const streamBuffer = 1 << 12

// stream is one open watch.
type stream[T any] struct {
	ch      chan reflector.Event[T]
	stopped chan struct{} // closed by Stop
	stop    sync.Once

	mu     sync.Mutex // serialises send and close
	closed bool       // ch is closed; guarded by mu
	// keep, if set, passes only the object events of a shard's objects (bookmarks
	// and errors always pass). Set before the stream is shared.
	keep func(T) bool
}

func newStream[T any]() *stream[T] {
	return &stream[T]{ch: make(chan reflector.Event[T], streamBuffer), stopped: make(chan struct{})}
}

// ResultChan implements reflector.Watch.
func (w *stream[T]) ResultChan() <-chan reflector.Event[T] { return w.ch }

// Stop implements reflector.Watch.
func (w *stream[T]) Stop() {
	w.stop.Do(func() { close(w.stopped) })
	w.close()
}

// send delivers ev, waiting while the buffer is full; false once the watch ended.
func (w *stream[T]) send(ev reflector.Event[T]) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	if w.keep != nil && ev.Type != watch.Bookmark && ev.Type != watch.Error && !w.keep(ev.Object) {
		return true // not this watch's shard: the server filters it out
	}
	select {
	case w.ch <- ev:
		return true
	case <-w.stopped:
		return false
	}
}

func (w *stream[T]) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.ch)
	}
}

var schemaResource = schema.GroupResource{Resource: "objects"}

func errString(s string) error { return errors.New(s) }
