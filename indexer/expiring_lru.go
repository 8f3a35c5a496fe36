package indexer

import (
	"container/list"
	"time"
)

// expiringLRU maps keys to values that expire a fixed time after they were last
// written, holding at most size entries: adding one more evicts the least recently
// used. Reading an entry makes it the most recently used; reading an expired one
// removes it. It is not safe for concurrent use: its one user, MutationCache, holds
// its own lock around every call.
//
// Time is time.Now, so tests move it with testing/synctest.
//
// client-go: k8s.io/apimachinery/pkg/util/cache/lruexpirecache.go LRUExpireCache
type expiringLRU[V any] struct {
	size    int
	order   list.List // of *lruEntry[V], most recently used at the front
	entries map[string]*list.Element
}

type lruEntry[V any] struct {
	key     string
	value   V
	expires time.Time
}

func newExpiringLRU[V any](size int) *expiringLRU[V] {
	return &expiringLRU[V]{size: size, entries: map[string]*list.Element{}}
}

// add stores value under key until now+ttl, as the most recently used entry,
// evicting the least recently used one when the LRU is full.
func (c *expiringLRU[V]) add(key string, value V, ttl time.Duration) {
	expires := time.Now().Add(ttl)
	if e, ok := c.entries[key]; ok {
		c.order.MoveToFront(e)
		entry := e.Value.(*lruEntry[V])
		entry.value, entry.expires = value, expires
		return
	}
	if c.order.Len() >= c.size {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.entries, oldest.Value.(*lruEntry[V]).key)
	}
	c.entries[key] = c.order.PushFront(&lruEntry[V]{key: key, value: value, expires: expires})
}

// get returns the value under key unless it has expired (an expired entry is removed),
// and makes it the most recently used.
func (c *expiringLRU[V]) get(key string) (V, bool) {
	e, ok := c.entries[key]
	if !ok {
		var zero V
		return zero, false
	}
	entry := e.Value.(*lruEntry[V])
	if time.Now().After(entry.expires) {
		c.order.Remove(e)
		delete(c.entries, key)
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return entry.value, true
}

// remove forgets key.
func (c *expiringLRU[V]) remove(key string) {
	if e, ok := c.entries[key]; ok {
		c.order.Remove(e)
		delete(c.entries, key)
	}
}

// keys returns the keys of the entries that have not expired, least recently used
// first — the order in which reading each of them leaves the LRU's order unchanged.
func (c *expiringLRU[V]) keys() []string {
	now := time.Now()
	out := make([]string, 0, c.order.Len())
	for e := c.order.Back(); e != nil; e = e.Prev() {
		if entry := e.Value.(*lruEntry[V]); !now.After(entry.expires) {
			out = append(out, entry.key)
		}
	}
	return out
}
