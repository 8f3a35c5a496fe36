package reflector

import (
	"errors"
	"time"

	"github.com/kubeinternals/informers/internal/objects"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// GaugeMetric is a value that is set.
//
// client-go: tools/cache/reflector_metrics.go GaugeMetric
type GaugeMetric interface{ Set(float64) }

// CounterMetric is a value that only goes up.
//
// client-go: tools/cache/reflector_metrics.go CounterMetric
type CounterMetric interface{ Inc() }

// SummaryMetric records observations: seconds, or a number of items.
//
// client-go: tools/cache/reflector_metrics.go SummaryMetric
type SummaryMetric interface{ Observe(float64) }

// LabeledCounterMetric counts per value of one label: a relist's reason, a watch
// event's type. A Prometheus provider wraps a CounterVec with one label.
type LabeledCounterMetric interface{ Inc(label string) }

// The names a Prometheus provider should give the metrics (each with the label "name",
// the reflector's). The first eight are the names client-go's reflector metrics had
// when it still recorded them. They were removed in 1.14 (kubernetes/kubernetes#74636)
// as a memory leak: their name label carried a per-reflector random suffix, so every
// new reflector made new series. Ours are labelled by Options.Name (or the Go type),
// which does not change.
const (
	ListsMetricName               = "reflector_lists_total"
	ListDurationMetricName        = "reflector_list_duration_seconds"
	ItemsInListMetricName         = "reflector_items_per_list"
	WatchesMetricName             = "reflector_watches_total"
	ShortWatchesMetricName        = "reflector_short_watches_total"
	WatchDurationMetricName       = "reflector_watch_duration_seconds"
	ItemsInWatchMetricName        = "reflector_items_per_watch"
	LastResourceVersionMetricName = "reflector_last_resource_version"
	// RelistsMetricName has a second label, "reason" (RelistReason).
	RelistsMetricName = "reflector_relists_total"
	// WatchEventsMetricName has a second label, "type".
	WatchEventsMetricName   = "reflector_watch_events_total"
	LastEventTimeMetricName = "reflector_last_event_timestamp_seconds"
	WatchOpenMetricName     = "reflector_watch_open"
)

// MetricsProvider creates the metrics of one reflector; name is the reflector's name
// (Options.Name, or the Go type). NewReflector calls each method once. A method that
// returns nil gets a metric that drops its values; a nil provider costs nothing.
//
// The first eight are client-go's reflector MetricsProvider, under its names. client-go
// v0.37.2 declares them (and SetReflectorMetricsProvider) but its reflector records
// none of them; ours records every one. The last four are what operators ask for
// when an informer misbehaves: why it relists, how much the watch delivers, and
// whether the watch is still alive.
//
// Differences from client-go: a provider per reflector in Options, not one per
// process set once; see workqueue.MetricsProvider for why.
//
// client-go: tools/cache/reflector_metrics.go MetricsProvider
type MetricsProvider interface {
	// NewListsMetric counts the initial lists: a LIST or a watch-list that ended in
	// a Replace of the store.
	NewListsMetric(name string) CounterMetric
	// NewListDurationMetric observes each such list's seconds, from the request to
	// the last item (the end bookmark of a watch-list).
	NewListDurationMetric(name string) SummaryMetric
	// NewItemsInListMetric observes each such list's number of objects.
	NewItemsInListMetric(name string) SummaryMetric
	// NewWatchesMetric counts the watches the server opened, a watch-list's stream
	// included: a request it refused (429, connection refused, 410) opened none and
	// is not counted. More than one per list means re-watches (a cut connection, the
	// server's timeout).
	NewWatchesMetric(name string) CounterMetric
	// NewShortWatchesMetric counts the watches that ended within a second with no
	// event (ErrVeryShortWatch).
	NewShortWatchesMetric(name string) CounterMetric
	// NewWatchDurationMetric observes each watch's seconds, from its request to its
	// end: once for every watch counted by NewWatchesMetric, a watch-list stream that
	// failed or closed before its end bookmark included.
	NewWatchDurationMetric(name string) SummaryMetric
	// NewItemsInWatchMetric observes each watch's number of events (bookmarks
	// excluded), once per watch as NewWatchDurationMetric does.
	NewItemsInWatchMetric(name string) SummaryMetric
	// NewLastResourceVersionMetric is the last synced resource version, as a number
	// (its last 15 digits, which a float64 holds exactly, as client-go truncates).
	NewLastResourceVersionMetric(name string) GaugeMetric

	// NewRelistsMetric counts relists by reason (RelistReason): every fetch of the
	// whole state the server answered after an earlier answered fetch (relists.go).
	NewRelistsMetric(name string) LabeledCounterMetric
	// NewWatchEventsMetric counts watch events by type: ADDED, MODIFIED, DELETED,
	// BOOKMARK (the initial events of a watch-list included).
	NewWatchEventsMetric(name string) LabeledCounterMetric
	// NewLastEventTimeMetric is the Unix time, in seconds, of the last watch event
	// or bookmark: time() minus it is how long the watch has been silent. With
	// bookmarks on (they are), a healthy watch is silent for about a minute at most
	// (BookmarkInterval).
	NewLastEventTimeMetric(name string) GaugeMetric
	// NewWatchOpenMetric is 1 while a watch stream is open (a watch-list's included)
	// and 0 while none is: between two watches, in a backoff, during a LIST. With
	// NewLastEventTimeMetric it tells a silent watch (open, no event for minutes) from
	// one that is down (0 for minutes); both are what the informer's WatchHealthy
	// reports as stuck.
	NewWatchOpenMetric(name string) GaugeMetric
}

// The reasons NewRelistsMetric counts by.
const (
	RelistExpired           = "expired"            // 410: the resource version was compacted
	RelistTooLargeRV        = "too_large_rv"       // the resource version is newer than the server has
	RelistVeryShortWatch    = "very_short_watch"   // ErrVeryShortWatch
	RelistConnectionRefused = "connection_refused" // the apiserver was unreachable
	// RelistWatchListEndedEarly: a watch-list stream closed before its end bookmark
	// (Transition S4), so the whole fetch starts over.
	RelistWatchListEndedEarly = "watch_list_ended_early"
	RelistOther               = "other" // any other error: a refused request, an ERROR event, a failed resync
)

// errWatchListEndedEarly is the reason of the relist that follows Transition S4.
var errWatchListEndedEarly = errors.New("the watch-list stream closed before its initial events ended")

// RelistReason is the label NewRelistsMetric counts err under.
func RelistReason(err error) string {
	switch {
	case isExpiredError(err):
		return RelistExpired
	case isTooLargeResourceVersionError(err):
		return RelistTooLargeRV
	case errors.Is(err, ErrVeryShortWatch):
		return RelistVeryShortWatch
	case utilnet.IsConnectionRefused(err):
		return RelistConnectionRefused
	case errors.Is(err, errWatchListEndedEarly):
		return RelistWatchListEndedEarly
	default:
		return RelistOther
	}
}

// reflectorMetrics is one reflector's metrics. A nil *reflectorMetrics records
// nothing: every method checks, so call sites need no guard. Its mutable fields are
// used by Run's goroutine only.
type reflectorMetrics struct {
	lists, watches, shortWatches CounterMetric
	listDuration, itemsInList    SummaryMetric
	watchDuration, itemsInWatch  SummaryMetric
	lastRV, lastEventTime        GaugeMetric
	watchOpen                    GaugeMetric
	relists, watchEvents         LabeledCounterMetric
	listStart, watchStart        time.Time
	eventsInWatch                int
}

type noopMetric struct{}

func (noopMetric) Inc()            {}
func (noopMetric) Observe(float64) {}
func (noopMetric) Set(float64)     {}

type noopLabeled struct{}

func (noopLabeled) Inc(string) {}

// orNoop returns m, or a metric that drops its values when the provider returned nil:
// noopMetric for the metric interfaces, noopLabeled for LabeledCounterMetric.
func orNoop[M any](m M) M {
	if any(m) != nil {
		return m
	}
	if n, ok := any(noopMetric{}).(M); ok {
		return n
	}
	return any(noopLabeled{}).(M)
}

func newReflectorMetrics(p MetricsProvider, name string) *reflectorMetrics {
	if p == nil {
		return nil
	}
	return &reflectorMetrics{
		lists: orNoop(p.NewListsMetric(name)), listDuration: orNoop(p.NewListDurationMetric(name)),
		itemsInList: orNoop(p.NewItemsInListMetric(name)), watches: orNoop(p.NewWatchesMetric(name)),
		shortWatches: orNoop(p.NewShortWatchesMetric(name)), watchDuration: orNoop(p.NewWatchDurationMetric(name)),
		itemsInWatch: orNoop(p.NewItemsInWatchMetric(name)), lastRV: orNoop(p.NewLastResourceVersionMetric(name)),
		relists: orNoop(p.NewRelistsMetric(name)), watchEvents: orNoop(p.NewWatchEventsMetric(name)),
		lastEventTime: orNoop(p.NewLastEventTimeMetric(name)), watchOpen: orNoop(p.NewWatchOpenMetric(name)),
	}
}

// listStarted marks the request of a LIST or a watch-list.
func (m *reflectorMetrics) listStarted() {
	if m != nil {
		m.listStart = time.Now()
	}
}

// listed records a list that is about to replace the store.
func (m *reflectorMetrics) listed(items int) {
	if m == nil {
		return
	}
	m.lists.Inc()
	m.listDuration.Observe(time.Since(m.listStart).Seconds())
	m.itemsInList.Observe(float64(items))
}

// relisted counts a fetch of the whole state after the first, under err's reason.
func (m *reflectorMetrics) relisted(err error) {
	if m != nil {
		m.relists.Inc(RelistReason(err))
	}
}

// watchStarted counts a watch the server opened (a watch-list's stream included),
// requested at start. Each is ended by exactly one watchEnded.
func (m *reflectorMetrics) watchStarted(start time.Time) {
	if m == nil {
		return
	}
	m.watches.Inc()
	m.watchOpen.Set(1)
	m.watchStart, m.eventsInWatch = start, 0
}

// event records one watch event or bookmark of type t.
func (m *reflectorMetrics) event(t string, bookmark bool) {
	if m == nil {
		return
	}
	m.watchEvents.Inc(t)
	if !bookmark {
		m.eventsInWatch++
	}
	m.lastEventTime.Set(float64(time.Now().UnixNano()) / 1e9)
}

// watchEnded records the end of the current watch and whether it was a very short
// one.
func (m *reflectorMetrics) watchEnded(err error) {
	if m == nil {
		return
	}
	m.watchOpen.Set(0)
	m.watchDuration.Observe(time.Since(m.watchStart).Seconds())
	m.itemsInWatch.Observe(float64(m.eventsInWatch))
	if errors.Is(err, ErrVeryShortWatch) {
		m.shortWatches.Inc()
	}
}

// watchClosed records that no watch is open any more, when Run returns with a
// stream that watchEnded did not end (see Reflector.runEnded).
func (m *reflectorMetrics) watchClosed() {
	if m != nil {
		m.watchOpen.Set(0)
	}
}

// synced records the last synced resource version, when it is a number (it is, on
// every apiserver backed by etcd).
func (m *reflectorMetrics) synced(rv string) {
	if m == nil {
		return
	}
	if v, ok := objects.ResourceVersionMetric(rv); ok {
		m.lastRV.Set(v)
	}
}
