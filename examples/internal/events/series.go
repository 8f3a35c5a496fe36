package events

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/utils/lru"
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
// client-go: tools/record/events_cache.go eventLogger (a k8s.io/utils/lru cache too)
type seriesCache struct {
	// mu makes observe's look-up, window check and replacement one step, and guards
	// each series' last.
	mu  sync.Mutex
	lru *lru.Cache // seriesKey → *series, least recently used evicted first
}

func newSeriesCache(capacity int) *seriesCache {
	return &seriesCache{lru: lru.New(capacity)}
}

// observe records that the event with key k happened at now and returns its series: the
// open one, or a new empty one if k is unknown, was forgotten, or its last observation
// is more than seriesWindow before now.
//
// client-go: tools/record/events_cache.go eventLogger.eventObserve
func (c *seriesCache) observe(k seriesKey, now time.Time) *series {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.lru.Get(k); ok {
		if s := v.(*series); now.Sub(s.last) <= seriesWindow {
			s.last = now
			return s
		}
		// Why a fresh series and not a reset of the old one: a Record still writing the
		// old series holds its lock; it finishes with the old state, untouched.
	}
	s := &series{lock: make(chan struct{}, 1), first: now, last: now}
	c.lru.Add(k, s) // replaces an expired series, or evicts the least recently used
	return s
}

// len returns how many series the cache holds.
func (c *seriesCache) len() int { return c.lru.Len() }
