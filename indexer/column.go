package indexer

// column is one of the table's dense arrays, stored as fixed-size pages: element i
// lives at pages[i/pageLen][i%pageLen].
//
//	pages: [ ▪▪▪▪▪▪▪▪ ][ ▪▪▪▪▪▪▪▪ ][ ▪▪▪·· ]
//	         full        full       the last page, being filled
//
// Why pages and not a slice: a store filled one Add at a time (an informer's initial
// list arrives as events) grows its arrays one element at a time. append grows a large
// slice by about 1.25 times and copies it each time, so by the end it has allocated
// about five times the final array, and the final array keeps up to a quarter of
// unused capacity. A column adds a page when the last one is full and never copies
// a full page. In BenchmarkIndexerBuild100kTwoIndexes (100,000 Adds, two indexes) the
// memory profile showed the three arrays allocating 30 MB on the way to their final
// 5.6 MB, the largest part of the build's 49.4 MB; paged, the build allocates 24.2 MB
// (client-go: 33 MB), and what the store keeps per key fell from 148 to 140 bytes.
//
// The price is one more load per access (the page's slice header; a few dozen of
// them for 100,000 objects, all in cache) and a loop over pages where a slice would be copied
// in one call. Side by side with the slice version, BenchmarkIndexerByIndex,
// IndexerUpdate, IndexerReplace, ListerList and ListerGet100k showed no difference
// beyond the noise of the machine (about 10%).
//
// Not safe for concurrent use; the owning store's lock guards it.
type column[E any] struct {
	// pages holds every page in order. All but the last are full (len pageLen); the
	// last holds the rest and may be empty, as a spare (see pop). A page never holds
	// more than pageLen elements.
	pages [][]E
	// n is the number of elements.
	n int
	// sizeHint is the length the column was created for (newColumn): pages up to it
	// are allocated at exactly the size needed.
	sizeHint int
}

// pageBits sets the page size: 4096 elements, 32 KiB of pointers or 64 KiB of strings.
//
// Why so large: the allocator puts an 8-byte header in front of every object of up to
// 32 KiB that holds pointers, so a page of exactly 16 KiB (1024 strings) took the next
// size class, 18 KiB: 12% wasted on every page (TestColumnGrowthAllocatesAboutTheFinalSize
// went over its bound by that much). Above 32 KiB an object gets whole 8 KiB runtime
// pages and no header, so these pages waste nothing. The unused end of the last page
// is the column's only slack: at most one page (64 KiB of strings), as much as
// append's quarter of spare capacity at about 16,000 objects, and less above.
const (
	pageBits = 12
	pageLen  = 1 << pageBits
	pageMask = pageLen - 1
)

// newColumn returns an empty column that will hold sizeHint elements without
// allocating more than it needs; 0 when the final size is unknown.
func newColumn[E any](sizeHint int) column[E] {
	return column[E]{sizeHint: sizeHint, pages: make([][]E, 0, (sizeHint+pageMask)/pageLen)}
}

func (c *column[E]) len() int { return c.n }

// at returns the address of element i, which must be below len.
func (c *column[E]) at(i int) *E { return &c.pages[i>>pageBits][i&pageMask] }

// push appends e.
func (c *column[E]) push(e E) {
	p := c.n >> pageBits
	if p == len(c.pages) {
		c.pages = append(c.pages, make([]E, 0, c.newPageCap(p)))
	}
	// A page created shorter than pageLen (see newPageCap) grows by append, like any
	// slice, until it holds pageLen elements; a full-size page never grows.
	c.pages[p] = append(c.pages[p], e)
	c.n++
}

// newPageCap is the capacity page p starts with.
func (c *column[E]) newPageCap(p int) int {
	if rest := c.sizeHint - p*pageLen; rest > 0 {
		// Replace knows how many objects it loads: their pages are exactly sized.
		return min(rest, pageLen)
	}
	if p == 0 {
		// A small store grows its only page like a slice, so a store of three
		// objects does not pay for four thousand.
		return 0
	}
	// A store that has filled one page is growing: a new page is a full one, so it is
	// never copied again.
	return pageLen
}

// pop removes the last element.
//
// Pitfall: the vacated slot is cleared, or the page keeps the deleted object (and its
// values) reachable — the "list results stay in memory" leak of kubernetes#113305 in
// miniature.
func (c *column[E]) pop() {
	c.n--
	p := c.n >> pageBits
	pg := c.pages[p]
	var zero E
	pg[len(pg)-1] = zero
	c.pages[p] = pg[:len(pg)-1]
	if len(pg) == 1 && p+1 < len(c.pages) {
		// Page p is now empty and is kept as the spare; release the spare after it.
		// Why keep one: a store whose size hovers around a page boundary would
		// otherwise allocate and drop a page on every Add and Delete.
		c.pages[p+1] = nil
		c.pages = c.pages[:p+1]
	}
}

// appendAll appends every element to dst, in order.
func (c *column[E]) appendAll(dst []E) []E {
	for _, pg := range c.pages {
		dst = append(dst, pg...)
	}
	return dst
}
