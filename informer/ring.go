package informer

// ring is an unbounded FIFO of notifications backed by a circular slice that doubles
// when full. It is not safe for concurrent use; the listener guards it.
//
// Why a ring and not a slice with append/reslice: a slice queue that pops from the
// front keeps reallocating as it slides; a ring reuses its array, so a listener that
// keeps up allocates nothing per notification.
//
// client-go: k8s.io/utils/buffer RingGrowing (used by tools/cache/shared_informer.go processorListener)
type ring[N any] struct {
	buf   []N
	head  int // index of the oldest element
	count int
}

func newRing[N any](size int) *ring[N] { return &ring[N]{buf: make([]N, size)} }

// push appends n, growing the buffer (×2) when it is full.
func (r *ring[N]) push(n N) {
	if r.count == len(r.buf) {
		grown := make([]N, max(2*len(r.buf), 1))
		k := copy(grown, r.buf[r.head:])
		copy(grown[k:], r.buf[:r.head])
		r.buf, r.head = grown, 0
	}
	r.buf[(r.head+r.count)%len(r.buf)] = n
	r.count++
}

// pop removes and returns the oldest element.
func (r *ring[N]) pop() (N, bool) {
	var zero N
	if r.count == 0 {
		return zero, false
	}
	n := r.buf[r.head]
	r.buf[r.head] = zero // let the GC have the object
	r.head = (r.head + 1) % len(r.buf)
	r.count--
	return n, true
}

func (r *ring[N]) len() int { return r.count }
