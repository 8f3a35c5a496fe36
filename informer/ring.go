package informer

// ring is an unbounded FIFO of notifications backed by a circular slice that doubles
// when full and halves when mostly empty. It is not safe for concurrent use; the
// listener guards it.
//
// Why a ring and not a slice with append/reslice: a slice queue that pops from the
// front keeps reallocating as it slides; a ring reuses its array, so a listener that
// keeps up allocates nothing per notification.
//
// Why it shrinks: a burst (a relist of 100,000 objects to a slow handler, say) grows
// the ring to the burst's size. Without shrinking, those slots would stay allocated
// for the informer's lifetime, long after the handler caught up. pop halves the
// buffer once it is three-quarters empty, never below the size it started with, so
// after a shrink the ring is at most half full and must double its contents before
// it grows again: a steady push/pop cannot make it resize back and forth.
//
// Differences from client-go: k8s.io/utils/buffer RingGrowing never shrinks; its
// buffer stays at the largest backlog a handler ever had.
//
// client-go: k8s.io/utils/buffer RingGrowing (used by tools/cache/shared_informer.go processorListener)
type ring[N any] struct {
	buf   []N
	head  int // index of the oldest element
	count int
	// initial is the size the ring starts with and never shrinks below.
	initial int
}

func newRing[N any](size int) *ring[N] {
	size = max(size, 1)
	return &ring[N]{buf: make([]N, size), initial: size}
}

// push appends n, growing the buffer (×2) when it is full.
func (r *ring[N]) push(n N) {
	if r.count == len(r.buf) {
		r.resize(2 * len(r.buf))
	}
	r.buf[(r.head+r.count)%len(r.buf)] = n
	r.count++
}

// pop removes and returns the oldest element, halving the buffer when it is no
// more than a quarter full and larger than its initial size.
func (r *ring[N]) pop() (N, bool) {
	var zero N
	if r.count == 0 {
		return zero, false
	}
	n := r.buf[r.head]
	r.buf[r.head] = zero // let the GC have the object
	r.head = (r.head + 1) % len(r.buf)
	r.count--
	if len(r.buf) > r.initial && r.count <= len(r.buf)/4 {
		r.resize(max(len(r.buf)/2, r.initial))
	}
	return n, true
}

// resize moves the elements, oldest first, to the start of a new buffer of size
// elements (at least r.count).
func (r *ring[N]) resize(size int) {
	buf := make([]N, size)
	if end := r.head + r.count; end <= len(r.buf) {
		copy(buf, r.buf[r.head:end])
	} else {
		k := copy(buf, r.buf[r.head:])
		copy(buf[k:], r.buf[:r.count-k])
	}
	r.buf, r.head = buf, 0
}

func (r *ring[N]) len() int { return r.count }

// capacity is the number of slots allocated now.
func (r *ring[N]) capacity() int { return len(r.buf) }
