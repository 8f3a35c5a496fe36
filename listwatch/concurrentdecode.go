package listwatch

import (
	"runtime"
	"sync"

	"github.com/kubeinternals/informers/reflector"
)

// Concurrent decoding of a watch-list: the stream's goroutine reads frames, several
// goroutines decode them, and one hands the events over in the order the frames
// arrived. A watch-list's initial events are the whole cache's worth of objects in one
// burst, and decoding them is most of a client's CPU during a sync; with more than one
// core they can be decoded side by side. Order is the invariant: the reflector must see
// the events exactly as the server sent them (the end bookmark last), so the
// concurrency never shows.
//
//	body ─▶ reader ──(slot index)──▶ jobs  ─▶ decoder × n ─▶ slot.ready
//	           │                                                 │
//	           └──────(slot index, in stream order)──▶ order ─▶ emitter ─▶ result
//
// The frames live in a ring of slots, each with its own buffer that keeps its
// capacity from use to use: a frame is copied once into its slot (the reader's buffer
// is reused for the next frame), and once the ring has grown there is no allocation
// per event beyond what decoding allocates. A slot goes back to the free list only
// after the emitter has handed its event over, so at most len(ring) frames are read
// ahead of the consumer: a slow consumer holds back the reader, as it does on the
// sequential path, and memory stays bounded.
//
// The decoded objects share nothing with the slot's buffer (the sequential path
// reuses its one buffer the same way), so reusing a slot cannot change an object
// already handed over.
//
// Like 1.38's rest/watch ConcurrentWatchEventDecoder (feature
// WatchListClientConcurrentDecoding): used only for a watch that asked for initial
// events, events delivered in stream order. Differences: 1.38 starts one goroutine per
// event and keeps at most 10 decoding; we keep n long-lived decoders and a fixed ring
// (n: Options.DecodeConcurrency, by default one per processor, at most 4:
// defaultDecoders). An undecodable object is skipped and
// logged here as on our sequential path; in 1.38 it ends the watch with an error.

// slotsPerDecoder is how many frames each decoder can have read ahead of the
// emitter: enough that a decoder finishing early finds the next frame already read.
const slotsPerDecoder = 4

// frameSlot holds one frame from the reader until the emitter has delivered its
// event.
type frameSlot[T reflector.Object] struct {
	buf   []byte // the frame, copied; capacity kept across uses
	ev    reflector.Event[T]
	err   error               // the decoding error, if any
	last  *reflector.Event[T] // set instead of buf: the ERROR event that ends the stream
	ready chan struct{}       // receives one value when ev/err (or last) is set
}

// receiveConcurrently is receive with n decoders.
func (w *streamWatch[T]) receiveConcurrently(c *codec[T], n int) {
	defer close(w.exited)
	defer close(w.result)
	defer w.cancel()
	frames := newFrameReader(c.framer, w.body)
	defer frames.frames.Close()

	ring := make([]frameSlot[T], n*slotsPerDecoder)
	free := make(chan int, len(ring))
	for i := range ring {
		ring[i].ready = make(chan struct{}, 1)
		free <- i
	}
	jobs := make(chan int, len(ring))
	order := make(chan int, len(ring))

	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { w.decode(c, ring, jobs) })
	}
	wg.Go(func() { w.emit(ring, order, free) })
	// The reader: this goroutine. It ends the pipeline by closing jobs and order, and
	// waits for the others before the deferred close(w.result), so that no event can
	// be sent on a closed channel.
	defer wg.Wait()
	defer close(order)
	defer close(jobs)
	for {
		frame, last, ok := w.nextFrame(frames)
		if !ok && last == nil {
			return
		}
		var i int
		select {
		case i = <-free:
		case <-w.done:
			return
		}
		s := &ring[i]
		if !ok {
			s.last = last
			s.ready <- struct{}{}
			order <- i
			return
		}
		s.buf = append(s.buf[:0], frame...)
		jobs <- i
		order <- i
	}
}

// decode is one decoder: it decodes the frame of each slot it is given, until jobs
// is closed. After Stop it only marks slots ready, so the pipeline drains at once.
func (w *streamWatch[T]) decode(c *codec[T], ring []frameSlot[T], jobs <-chan int) {
	for i := range jobs {
		s := &ring[i]
		if !w.stopped() {
			s.ev, s.err = c.decodeEvent(s.buf)
		}
		s.ready <- struct{}{}
	}
}

// emit hands the decoded events over in stream order and recycles their slots.
func (w *streamWatch[T]) emit(ring []frameSlot[T], order <-chan int, free chan<- int) {
	for i := range order {
		s := &ring[i]
		select {
		case <-s.ready:
		case <-w.done:
			return
		}
		// Stopped meanwhile: the decoder may have skipped this slot (it checks after
		// Stop), and an empty event must not reach a consumer still reading.
		if w.stopped() {
			return
		}
		if s.last != nil {
			w.send(*s.last)
			return
		}
		ok := w.deliver(s.ev, s.err)
		s.ev, s.err = reflector.Event[T]{}, nil // drop the object: the slot may wait a long time
		if !ok {
			return
		}
		free <- i
	}
}

// maxDefaultDecoders caps the default number of decoders (defaultDecoders).
const maxDefaultDecoders = 4

// defaultDecoders is Options.DecodeConcurrency's default: one decoder per processor
// the Go runtime may use, at most maxDefaultDecoders; one processor gets the
// sequential path, where a decoder could only take turns with the reader.
//
// Why on by default: on 2 cores, against a kube-apiserver on the same 2 cores, 2
// decoders synced 100,000 Pods in JSON in 0.6× the time and 0.74× the client CPU of
// one, in protobuf in 0.9× the time (3-round runs of BenchmarkWatchListDecoding100kPods
// in bench/), with the same peak heap; a 10k-ConfigMap sync was no slower with 4.
// More than 2 cores were not measured: the cap keeps the ring (4 slots a decoder)
// small.
func defaultDecoders() int {
	return min(runtime.GOMAXPROCS(0), maxDefaultDecoders)
}
