package events

import (
	"container/list"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
)

// Aggregation bounds.
const (
	// seriesCacheSize is how many distinct events a Recorder remembers; the least
	// recently seen is forgotten first, and its next repeat starts a new Event.
	//
	// client-go: tools/record/events_cache.go maxLruCacheEntries
	seriesCacheSize = 4096
	// seriesWindow is how long a series stays open after its last repeat: a repeat that
	// comes later starts a new Event instead of counting on the old one.
	//
	// client-go: tools/events/event_broadcaster.go finishTime
	seriesWindow = 6 * time.Minute
)

// seriesKey identifies repeats of one event: the same object, type, reason, action and
// note. Events with equal keys within seriesWindow are one Event with a growing count.
//
// Why no reporting controller or instance: they are fixed per Recorder, and the cache
// belongs to one Recorder.
//
// client-go: tools/record/events_cache.go getEventKey
type seriesKey struct {
	// regarding has no resourceVersion. Pitfall: the object changes between retries (a
	// Foo's status is written, a Deployment's replicas move), so a key with the
	// resourceVersion would start a new Event on every retry — the flood this cache
	// exists to stop. client-go's record package leaves it out too.
	regarding                       corev1.ObjectReference
	eventType, reason, action, note string
}

// keyOf returns the series key of a built Event.
func keyOf(ev *eventsv1.Event) seriesKey {
	ref := ev.Regarding
	ref.ResourceVersion = ""
	return seriesKey{regarding: ref, eventType: ev.Type, reason: ev.Reason, action: ev.Action, note: ev.Note}
}

// series is what a Recorder knows about the Event it wrote for one key.
type series struct {
	// lock is held (a value sent) by the one Record writing this series. Why a channel
	// and not a Mutex: a caller waiting behind a slow request must give up when its own
	// timeout ends, and only a channel can be waited on in a select with ctx.Done().
	lock chan struct{}

	// The fields below are read and written only while holding lock.

	// count is how many times the event was observed, including occurrences whose
	// request failed: the next write carries them, so the count says how often it
	// happened, not how often a write got through.
	count int32
	// first is when the event was first observed: the eventTime of the Event, and of
	// its replacement if it has to be created again.
	first time.Time
	// namespace and name locate the stored Event; name is "" until one is created.
	namespace, name string

	// last is when the event was last observed; guarded by seriesCache.mu, not lock.
	last time.Time
}

// seriesCache maps keys to series, keeps at most capacity of them, and forgets the
// least recently observed first. It is safe for concurrent use.
//
// Simplified: client-go uses k8s.io/utils/lru; a list and a map do the same here.
type seriesCache struct {
	capacity int

	mu    sync.Mutex
	order *list.List                  // of *cacheEntry, most recently observed first; guarded by mu
	byKey map[seriesKey]*list.Element // guarded by mu
}

type cacheEntry struct {
	key seriesKey
	s   *series
}

func newSeriesCache(capacity int) *seriesCache {
	return &seriesCache{capacity: capacity, order: list.New(), byKey: make(map[seriesKey]*list.Element)}
}

// observe records that the event with key k happened at now and returns its series: the
// open one, or a new empty one if k is unknown, was forgotten, or its last observation
// is more than seriesWindow before now.
//
// client-go: tools/record/events_cache.go eventLogger.eventObserve
func (c *seriesCache) observe(k seriesKey, now time.Time) *series {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[k]; ok {
		s := el.Value.(*cacheEntry).s
		if now.Sub(s.last) <= seriesWindow {
			s.last = now
			c.order.MoveToFront(el)
			return s
		}
		// Why a fresh series and not a reset of the old one: a Record still writing the
		// old series holds its lock; it finishes with the old state, untouched.
		c.order.Remove(el)
		delete(c.byKey, k)
	}
	s := &series{lock: make(chan struct{}, 1), first: now, last: now}
	c.byKey[k] = c.order.PushFront(&cacheEntry{key: k, s: s})
	if c.order.Len() > c.capacity {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.byKey, oldest.Value.(*cacheEntry).key)
	}
	return s
}

// len returns how many series the cache holds.
func (c *seriesCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
