// Package ring is the FIFO storage behind the workqueue (workqueue.Queue) and behind
// each informer handler's notification buffer (the informer's listener): a circular
// buffer that grows by doubling, shrinks after a burst, and once grown to the peak
// depth pushes and pops without allocating. It uses only the standard library.
package ring

import "iter"

// Ring is a FIFO on a circular buffer: Push appends at the tail, Pop takes from the
// head. The zero value is an empty ring ready to use. It is not safe for concurrent
// use; its owner guards it with a mutex.
//
// Why not a slice FIFO (client-go's workqueue): popping with `q = q[1:]` walks the
// slice forward through its backing array, and the next append past the end must copy
// into a fresh array. In a steady push/pop cycle that is an allocation every few
// operations. A ring reuses its slots.
//
// client-go: util/workqueue/queue.go DefaultQueue; k8s.io/utils/buffer RingGrowing
// (used by tools/cache/shared_informer.go processorListener)
type Ring[T any] struct {
	// Floor is the smallest buffer the ring allocates and shrinks back to, rounded up
	// to a power of two; 0 means minSize. Set it before the first Push. The informer's
	// listener uses 1024 (client-go's initialBufferSize).
	Floor int

	// buf holds the items; its length is zero or a power of two, so that an index wraps
	// with a mask instead of a division.
	buf []T
	// head is the index in buf of the oldest item.
	head int
	// n is the number of items; they sit at buf[head], buf[head+1], … modulo len(buf).
	n int
	// minCap is Floor rounded up to a power of two (at least minSize), computed at
	// the first allocation so that Pop's shrink check is two comparisons.
	minCap int
}

const (
	// minSize is the first allocation when Floor is 0: big enough that a quiet queue
	// never resizes.
	minSize = 16
	// shrinkAbove is the smallest buffer that Pop will shrink. Below it a few hundred
	// slots are not worth giving back.
	shrinkAbove = 256
)

// Len returns the number of items in the ring.
func (r *Ring[T]) Len() int { return r.n }

// Cap returns the number of slots allocated now.
func (r *Ring[T]) Cap() int { return len(r.buf) }

// All yields the items, oldest first, without removing them. The ring must not be
// changed during the iteration.
func (r *Ring[T]) All() iter.Seq[T] {
	return func(yield func(T) bool) {
		for i := range r.n {
			if !yield(r.buf[(r.head+i)&(len(r.buf)-1)]) {
				return
			}
		}
	}
}

// Push appends item at the tail, doubling the buffer when it is full.
func (r *Ring[T]) Push(item T) {
	if r.n == len(r.buf) {
		if r.minCap == 0 {
			r.minCap = minSize
			for r.minCap < r.Floor {
				r.minCap *= 2
			}
		}
		r.resize(max(r.minCap, 2*len(r.buf)))
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = item
	r.n++
}

// Pop removes and returns the oldest item. The ring must not be empty.
//
// Why the slot is zeroed: a popped pointer left in buf would keep its object alive
// until the slot is overwritten, which in a ring can be never.
//
// Why it shrinks: a burst of a million items (a relist of a huge resource to a slow
// handler, say) would otherwise pin a million slots for the owner's lifetime. It
// halves the buffer once it is three-quarters empty, never below the floor, so after a
// shrink the ring is at most half full and must double its contents before it grows
// again — push and pop cannot make it resize back and forth.
//
// Differences from client-go: RingGrowing, behind client-go's informer listeners,
// never shrinks; its buffer stays at the largest backlog a handler ever had.
func (r *Ring[T]) Pop() T {
	var zero T
	item := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	// len(r.buf) and minCap are powers of two: "greater" means "at least twice".
	if len(r.buf) >= shrinkAbove && r.n <= len(r.buf)/4 && len(r.buf) > r.minCap {
		r.resize(len(r.buf) / 2)
	}
	return item
}

// resize moves the items, oldest first, to the start of a new buffer of the given size,
// which must be a power of two no smaller than r.n.
func (r *Ring[T]) resize(size int) {
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
