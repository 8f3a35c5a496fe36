package reflector

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// FakeWatch is a Watch driven by hand, for tests of anything that consumes a watch:
// the test plays the API server with Send and Close, the consumer calls Stop.
//
// client-go: apimachinery/pkg/watch/watch.go FakeWatcher
type FakeWatch[T any] struct {
	result  chan Event[T]
	stopped chan struct{} // closed once by Stop
	stop    sync.Once

	mu     sync.Mutex // guards closed and serialises sends against the close of result
	closed bool       // guarded by mu; result has been closed
}

// NewFakeWatch returns an open FakeWatch with an unbuffered result channel, so Send
// returns only once the consumer has taken the event.
func NewFakeWatch[T any]() *FakeWatch[T] {
	return &FakeWatch[T]{result: make(chan Event[T]), stopped: make(chan struct{})}
}

// ResultChan implements Watch.
func (f *FakeWatch[T]) ResultChan() <-chan Event[T] { return f.result }

// Stop implements Watch: it unblocks a pending Send and closes the result channel.
func (f *FakeWatch[T]) Stop() {
	f.stop.Do(func() { close(f.stopped) })
	f.Close()
}

// Stopped is closed when the consumer calls Stop; a scripted server selects on it
// to end its goroutine.
func (f *FakeWatch[T]) Stopped() <-chan struct{} { return f.stopped }

// Close ends the stream from the server's side, as when the server's watch timeout
// expires. Later Sends return false.
func (f *FakeWatch[T]) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		close(f.result)
	}
}

// Send delivers ev and reports whether the consumer received it (false once the
// watch is stopped or closed).
func (f *FakeWatch[T]) Send(ev Event[T]) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	select {
	case f.result <- ev:
		return true
	case <-f.stopped:
		return false
	}
}

// Add sends an Added event.
func (f *FakeWatch[T]) Add(obj T) bool { return f.Send(Event[T]{Type: watch.Added, Object: obj}) }

// Modify sends a Modified event.
func (f *FakeWatch[T]) Modify(obj T) bool { return f.Send(Event[T]{Type: watch.Modified, Object: obj}) }

// Delete sends a Deleted event.
func (f *FakeWatch[T]) Delete(obj T) bool { return f.Send(Event[T]{Type: watch.Deleted, Object: obj}) }

// Bookmark sends a Bookmark event; obj should carry only a resource version.
func (f *FakeWatch[T]) Bookmark(obj T) bool {
	return f.Send(Event[T]{Type: watch.Bookmark, Object: obj})
}

// Error sends an Error event with status, as the server does for a watch whose
// resource version has been compacted (410 Expired).
func (f *FakeWatch[T]) Error(status *metav1.Status) bool {
	return f.Send(Event[T]{Type: watch.Error, Status: status})
}
