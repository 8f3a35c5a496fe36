package workqueue

// ring is a FIFO on a circular buffer. It is the storage behind Queue: Push appends at
// the tail, Pop takes from the head. It is not safe for concurrent use; Queue guards it
// with its mutex.
//
// Why not client-go's slice FIFO: client-go pops with `q = q[1:]`, so the slice walks
// forward through its backing array, and the next append past the end must copy into a
// fresh array. In a steady Add/Get cycle that is an allocation every few operations.
// A ring reuses its slots: once it has grown to the peak depth, push and pop never
// allocate.
//
// client-go: util/workqueue/queue.go DefaultQueue
type ring[T any] struct {
	// buf holds the items; its length is zero or a power of two, so that an index wraps
	// with a mask instead of a division.
	buf []T
	// head is the index in buf of the oldest item.
	head int
	// n is the number of items; they sit at buf[head], buf[head+1], … modulo len(buf).
	n int
}

const (
	// minRingSize is the first allocation: big enough that a quiet queue never resizes.
	minRingSize = 16
	// shrinkAbove is the smallest buffer that pop will shrink. Below it a few hundred
	// slots are not worth giving back.
	shrinkAbove = 256
)

// len returns the number of items in the ring.
func (r *ring[T]) len() int { return r.n }

// push appends item at the tail, doubling the buffer when it is full.
func (r *ring[T]) push(item T) {
	if r.n == len(r.buf) {
		r.resize(max(minRingSize, 2*len(r.buf)))
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = item
	r.n++
}

// pop removes and returns the oldest item. The ring must not be empty.
//
// Why the slot is zeroed: a popped pointer left in buf would keep its object alive
// until the slot is overwritten, which in a ring can be never.
//
// Why it shrinks: a burst of a million items would otherwise pin a million slots for
// the queue's lifetime. It halves the buffer once it is three-quarters empty, so after
// a shrink the ring is at most half full and must double its contents before it grows
// again — push and pop cannot make it resize back and forth.
func (r *ring[T]) pop() T {
	var zero T
	item := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	if len(r.buf) >= shrinkAbove && r.n <= len(r.buf)/4 {
		r.resize(len(r.buf) / 2)
	}
	return item
}

// resize moves the items, oldest first, to the start of a new buffer of the given size,
// which must be a power of two no smaller than r.n.
func (r *ring[T]) resize(size int) {
	buf := make([]T, size)
	if end := r.head + r.n; end <= len(r.buf) {
		copy(buf, r.buf[r.head:end])
	} else {
		k := copy(buf, r.buf[r.head:])
		copy(buf[k:], r.buf[:r.n-k])
	}
	r.buf = buf
	r.head = 0
}
