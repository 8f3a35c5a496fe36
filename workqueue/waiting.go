package workqueue

// waitEntry is one item held back by a DelayingQueue until readyAt.
//
// Why readyAt is an int64 and not a time.Time: the heap compares readyAt values
// log(n) times per insert and per pop, and comparing two integers is much cheaper than
// comparing two time.Time values (wall clock, monotonic reading and location). The
// DelayingQueue converts: readyAt is nanoseconds since the queue's epoch, on the
// monotonic clock.
type waitEntry[T any] struct {
	readyAt int64
	// seq is the entry's insertion number: it breaks ties between equal readyAt (first
	// in, first out) and tells a live entry from a superseded one.
	seq  uint64
	item T
}

// liveEntry is what waitSet.live keeps per item: which heap entry counts.
type liveEntry struct {
	readyAt int64
	seq     uint64
}

// waitSet holds the items of a DelayingQueue that are not due yet: a min-heap on
// readyAt, plus a map that makes a repeated AddAfter of the same item move it earlier
// but never later. It is not safe for concurrent use; DelayingQueue guards it.
//
// How "move earlier" works without a position index: client-go allocates an entry per
// AddAfter, keeps its heap index in it (updated on every swap) and calls heap.Fix. We push a fresh entry instead and remember in
// live which entry (seq) counts. The superseded one stays in the heap as a stale entry
// and is dropped when it reaches the top. Because a stale entry is always later than
// the live entry that replaced it, it never delays or duplicates anything.
//
// Invariant: stale counts the heap entries whose seq is not live[item].seq; so
// len(heap) == len(live) + stale. After every insert, stale <= max(len(live),
// compactAbove).
//
// client-go: util/workqueue/delaying_queue.go waitForPriorityQueue, insert
type waitSet[T comparable] struct {
	// heap is a binary min-heap ordered by less: heap[0] is the next entry due.
	heap []waitEntry[T]
	// live maps each waiting item to its one live entry.
	live map[T]liveEntry
	// stale is the number of superseded entries still in heap.
	stale int
	// seq is the last insertion number handed out.
	seq uint64
}

const (
	// minHeapCap is the heap's first allocation.
	minHeapCap = 16
	// compactAbove is the number of stale entries below which compaction is never
	// worth it.
	compactAbove = 64
	// releaseAbove is the heap capacity above which an emptied heap gives its backing
	// array back.
	releaseAbove = 1024
)

func newWaitSet[T comparable]() waitSet[T] {
	return waitSet[T]{live: make(map[T]liveEntry)}
}

// len returns the number of items waiting (stale entries are not counted).
func (w *waitSet[T]) len() int { return len(w.live) }

// insert holds item back until readyAt. If item is already waiting, only an earlier
// readyAt changes anything. It reports whether an entry was pushed.
//
// client-go: util/workqueue/delaying_queue.go insert
func (w *waitSet[T]) insert(item T, readyAt int64) bool {
	if cur, ok := w.live[item]; ok {
		if readyAt >= cur.readyAt {
			return false
		}
		w.stale++
	}
	w.seq++
	w.live[item] = liveEntry{readyAt: readyAt, seq: w.seq}
	w.push(waitEntry[T]{readyAt: readyAt, seq: w.seq, item: item})
	// Pitfall: moving the same items earlier over and over could grow the heap without
	// bound. Rebuilding it once stale entries outnumber live ones keeps it at most about
	// twice the number of items waiting, at an amortised O(1) cost per insert.
	if w.stale > compactAbove && w.stale > len(w.live) {
		w.compact()
	}
	return true
}

// next returns the readyAt of the earliest waiting item, dropping stale entries that
// sit on top of the heap. ok is false when nothing is waiting.
func (w *waitSet[T]) next() (readyAt int64, ok bool) {
	for len(w.heap) > 0 {
		top := w.heap[0]
		if live, ok := w.live[top.item]; ok && live.seq == top.seq {
			return top.readyAt, true
		}
		w.pop()
		w.stale--
	}
	return 0, false
}

// popDue removes and returns the earliest item if it is due at now.
func (w *waitSet[T]) popDue(now int64) (item T, ok bool) {
	readyAt, ok := w.next()
	if !ok || readyAt > now {
		return item, false
	}
	item = w.pop().item
	delete(w.live, item)
	if len(w.heap) == 0 && cap(w.heap) > releaseAbove {
		// Why: after a burst the backing array would otherwise stay at its peak size.
		w.heap = nil
	}
	return item, true
}

// clear drops every waiting item and releases the memory.
func (w *waitSet[T]) clear() {
	w.heap = nil
	clear(w.live)
	w.stale = 0
}

// compact removes the stale entries and restores the heap order in O(n).
func (w *waitSet[T]) compact() {
	kept := w.heap[:0]
	for _, e := range w.heap {
		if live, ok := w.live[e.item]; ok && live.seq == e.seq {
			kept = append(kept, e)
		}
	}
	clear(w.heap[len(kept):]) // Why: release the items the dropped entries referenced.
	w.heap = kept
	w.stale = 0
	for i := len(w.heap)/2 - 1; i >= 0; i-- {
		w.down(i)
	}
}

// less orders the heap: earlier readyAt first, then earlier insertion.
func (w *waitSet[T]) less(i, j int) bool {
	a, b := &w.heap[i], &w.heap[j]
	return a.readyAt < b.readyAt || (a.readyAt == b.readyAt && a.seq < b.seq)
}

// push adds e and sifts it up.
//
// Why not container/heap: its Push and Pop take and return `any`, which boxes every
// entry into an allocation.
func (w *waitSet[T]) push(e waitEntry[T]) {
	if len(w.heap) == cap(w.heap) {
		// Why double by hand: append grows a large slice by about 1.25×, so a heap
		// filled one entry at a time is copied into a new array a dozen times on its way
		// to 10,000 entries, allocating about three times its final size
		// (BenchmarkDelayingQueueAddAfterDrain: 820 KB of the op's 2.1 MB). Doubling
		// allocates at most twice the final size.
		grown := make([]waitEntry[T], len(w.heap), max(minHeapCap, 2*cap(w.heap)))
		copy(grown, w.heap)
		w.heap = grown
	}
	w.heap = append(w.heap, e)
	for i := len(w.heap) - 1; i > 0; {
		parent := (i - 1) / 2
		if !w.less(i, parent) {
			break
		}
		w.heap[i], w.heap[parent] = w.heap[parent], w.heap[i]
		i = parent
	}
}

// pop removes and returns the top entry; the heap must not be empty.
func (w *waitSet[T]) pop() waitEntry[T] {
	last := len(w.heap) - 1
	top := w.heap[0]
	w.heap[0] = w.heap[last]
	w.heap[last] = waitEntry[T]{} // Why: release the item for the garbage collector.
	w.heap = w.heap[:last]
	if last > 0 {
		w.down(0)
	}
	return top
}

// down sifts the entry at i down to its place.
func (w *waitSet[T]) down(i int) {
	n := len(w.heap)
	for {
		smallest, left, right := i, 2*i+1, 2*i+2
		if left < n && w.less(left, smallest) {
			smallest = left
		}
		if right < n && w.less(right, smallest) {
			smallest = right
		}
		if smallest == i {
			return
		}
		w.heap[i], w.heap[smallest] = w.heap[smallest], w.heap[i]
		i = smallest
	}
}
