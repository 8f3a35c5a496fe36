// Package fifo is the FIFO storage behind the workqueue (workqueue.Queue) and behind
// each informer handler's notification buffer (the informer's listener): a chain of
// fixed-size blocks. It grows a block at a time without copying what it holds, gives
// each block back as soon as it has been read, and, in a steady push/pop cycle at any
// depth, allocates nothing. It uses only the standard library.
package fifo

import (
	"iter"
	"sync"
)

// BlockLen is the number of items in one block. With the listener's 32-byte
// notifications a block is 4 KiB; with a workqueue's string keys, 2 KiB.
//
// Why 128: big enough that taking or returning a block is rare (once per 128 items),
// small enough that a quiet queue holds little (one block) and that a drained burst
// gives its memory back in fine steps.
const BlockLen = 128

// block is one link of the chain.
type block[T any] struct {
	items [BlockLen]T
	next  *block[T]
}

// Pool shares spare blocks between queues: the informer's listeners of one informer
// draw on one Pool, so the blocks a fast handler has finished with hold the next
// notifications of a slow one, and a burst that comes back (a resync every period)
// finds the blocks of the last one. It is a sync.Pool underneath: spare blocks that
// no queue asks for are freed by the garbage collector. The zero value is ready; it
// is safe for concurrent use.
type Pool[T any] struct {
	p sync.Pool
}

func (p *Pool[T]) get() *block[T] {
	if b, ok := p.p.Get().(*block[T]); ok {
		return b
	}
	return new(block[T])
}

func (p *Pool[T]) put(b *block[T]) {
	p.p.Put(b)
}

// Queue is a FIFO: Push appends at the tail, Pop takes from the head. The zero value
// is an empty queue ready to use. It is not safe for concurrent use; its owner guards
// it with a mutex.
//
// Why blocks, not one growable buffer: a buffer that grows by doubling allocates
// about twice what it finally holds and copies every item on the way; with fifty
// handlers each buffering a burst that was most of what the informer allocated
// (BenchmarkInformerFanOut/handlers=50: 9.2 MB of 17 MB per op in ring resizes). A
// buffer that shrinks after a burst pays it all again at the next burst (a resync to
// ten handlers: 4.1 MB per resync). Blocks are allocated once per 128 items, never
// copied, and go back to the Pool when read.
//
// Why not a slice FIFO (client-go's workqueue): popping with `q = q[1:]` walks the
// slice forward through its backing array, and the next append past the end must copy
// into a fresh array. In a steady push/pop cycle that is an allocation every few
// operations.
//
// client-go: util/workqueue/queue.go DefaultQueue; k8s.io/utils/buffer RingGrowing
// (used by tools/cache/shared_informer.go processorListener)
type Queue[T any] struct {
	// Pool, when set, is where the queue takes blocks from and gives them back to.
	// Without one, blocks come from the allocator and go to the garbage collector.
	// Set it before the first Push.
	Pool *Pool[T]

	// head is the block holding the oldest item, at head.items[r]; tail is the block
	// the next Push writes, at tail.items[w]. Both are nil until the first Push.
	head, tail *block[T]
	r, w       int
	// spare is one block kept back when a block is emptied, so that a queue hovering
	// around a block boundary does not take and return a block on every cycle.
	spare *block[T]
	// n is the number of items.
	n int
}

// Len returns the number of items in the queue.
func (q *Queue[T]) Len() int { return q.n }

// Cap returns the number of slots the queue holds now: its blocks and its spare.
func (q *Queue[T]) Cap() int {
	blocks := 0
	for b := q.head; b != nil; b = b.next {
		blocks++
	}
	if q.spare != nil {
		blocks++
	}
	return blocks * BlockLen
}

// All yields the items, oldest first, without removing them. The queue must not be
// changed during the iteration.
func (q *Queue[T]) All() iter.Seq[T] {
	return func(yield func(T) bool) {
		i := q.r
		for b := q.head; b != nil; b = b.next {
			end := BlockLen
			if b == q.tail {
				end = q.w
			}
			for ; i < end; i++ {
				if !yield(b.items[i]) {
					return
				}
			}
			i = 0
		}
	}
}

// Push appends item at the tail, linking a new block when the tail is full.
func (q *Queue[T]) Push(item T) {
	if q.tail == nil {
		q.head = q.takeBlock()
		q.tail = q.head
	} else if q.w == BlockLen {
		b := q.takeBlock()
		q.tail.next = b
		q.tail = b
		q.w = 0
	}
	q.tail.items[q.w] = item
	q.w++
	q.n++
}

// Pop removes and returns the oldest item. The queue must not be empty.
func (q *Queue[T]) Pop() T {
	var zero T
	item := q.head.items[q.r]
	// Why clear the slot: the queue must not keep a popped item (an object, a key)
	// alive; and a block that comes back to a Pool is then all zero, ready to reuse.
	q.head.items[q.r] = zero
	q.r++
	q.n--
	switch {
	case q.n == 0:
		// Empty (the head is the tail): start again at the front of the block in
		// hand, so a quiet queue keeps this one block and allocates nothing. The spare
		// of a burst goes back to the Pool, for the other queues that share it.
		q.r, q.w = 0, 0
		if q.spare != nil && q.Pool != nil {
			q.Pool.put(q.spare)
			q.spare = nil
		}
	case q.r == BlockLen:
		done := q.head
		q.head = done.next
		q.r = 0
		done.next = nil
		q.giveBack(done)
	}
	return item
}

// takeBlock returns an empty block: the spare, one from the Pool, or a new one.
func (q *Queue[T]) takeBlock() *block[T] {
	if b := q.spare; b != nil {
		q.spare = nil
		return b
	}
	if q.Pool != nil {
		return q.Pool.get()
	}
	return new(block[T])
}

// giveBack keeps an emptied block as the spare, or returns it to the Pool (or the
// garbage collector) when there is one already.
func (q *Queue[T]) giveBack(b *block[T]) {
	switch {
	case q.spare == nil:
		q.spare = b
	case q.Pool != nil:
		q.Pool.put(b)
	}
}
