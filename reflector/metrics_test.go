package reflector

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeinternals/informers/internal/testrig/testmetrics"
)

// fakeMetrics records every metric of every reflector as "name metric" → values.
type fakeMetrics struct{ testmetrics.Recorder }

func (p *fakeMetrics) m(name, metric string) testmetrics.Metric      { return p.Metric(name + " " + metric) }
func (p *fakeMetrics) NewListsMetric(n string) CounterMetric         { return p.m(n, "lists") }
func (p *fakeMetrics) NewListDurationMetric(n string) SummaryMetric  { return p.m(n, "list_duration") }
func (p *fakeMetrics) NewItemsInListMetric(n string) SummaryMetric   { return p.m(n, "items_in_list") }
func (p *fakeMetrics) NewWatchesMetric(n string) CounterMetric       { return p.m(n, "watches") }
func (p *fakeMetrics) NewShortWatchesMetric(n string) CounterMetric  { return p.m(n, "short_watches") }
func (p *fakeMetrics) NewWatchDurationMetric(n string) SummaryMetric { return p.m(n, "watch_duration") }
func (p *fakeMetrics) NewItemsInWatchMetric(n string) SummaryMetric  { return p.m(n, "items_in_watch") }
func (p *fakeMetrics) NewLastResourceVersionMetric(n string) GaugeMetric {
	return p.m(n, "last_rv")
}
func (p *fakeMetrics) NewRelistsMetric(n string) LabeledCounterMetric {
	return p.Labeled(n + " relists")
}
func (p *fakeMetrics) NewWatchEventsMetric(n string) LabeledCounterMetric {
	return p.Labeled(n + " watch_events")
}
func (p *fakeMetrics) NewLastEventTimeMetric(n string) GaugeMetric { return p.m(n, "last_event_time") }
func (p *fakeMetrics) NewWatchOpenMetric(n string) GaugeMetric     { return p.m(n, "watch_open") }

// count is how many values key received.
func (p *fakeMetrics) count(key string) int { return len(p.Values(key)) }

// A watch-list, a watch that ends with 410, a relist as a watch-list again: every
// metric moves as the state machine does.
func TestReflectorMetricsFollowTheStateMachine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := newScriptedLW(t,
			watchClose(0, added(cmUID("a", "5")), added(cmUID("b", "6")), bookmarked(initialEventsEnd("9")),
				modified(cmUID("a", "10")), errorEvent(errExpired())),
			watchHold(added(cmUID("a", "10")), bookmarked(initialEventsEnd("11"))),
		)
		p := &fakeMetrics{}
		r, err := NewReflector(lw, &recordingStore{}, Options[cmT]{Name: "cms", MetricsProvider: p})
		require.NoError(t, err)
		began := time.Now()
		time.Sleep(3 * time.Second) // the clock the metrics read, in the bubble
		// Not runUntilExhausted: the second watch must reach the watch loop (past its
		// end bookmark) before the cancel, so that its end is recorded too.
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		// Goroutine owned by this test: Run, ended by cancel below.
		go func() { defer close(done); r.Run(ctx) }()
		<-lw.exhausted
		synctest.Wait()
		cancel()
		<-done

		assert.Equal(t, 2, p.count("cms lists"), p.String())
		assert.Equal(t, []float64{2, 1}, p.Values("cms items_in_list"))
		assert.Equal(t, 2, p.count("cms list_duration"))
		assert.Equal(t, 2, p.count("cms watches"), "each watch-list's stream is a watch")
		assert.Equal(t, 1, p.count("cms relists{expired}"), "the 410 relisted")
		assert.Equal(t, 3, p.count("cms watch_events{ADDED}"))
		assert.Equal(t, 1, p.count("cms watch_events{MODIFIED}"))
		assert.Equal(t, 2, p.count("cms watch_events{BOOKMARK}"))
		assert.Equal(t, []float64{3, 1}, p.Values("cms items_in_watch"),
			"the first watch ended after 3 events (bookmarks excluded), the second when the test stopped it")
		assert.Equal(t, 2, p.count("cms watch_duration"))
		assert.Zero(t, p.count("cms short_watches"))
		rvs := p.Values("cms last_rv")
		require.NotEmpty(t, rvs)
		assert.Equal(t, 11.0, rvs[len(rvs)-1])
		times := p.Values("cms last_event_time")
		require.NotEmpty(t, times)
		last := times[len(times)-1]
		assert.GreaterOrEqual(t, last, float64(began.Add(3*time.Second).UnixNano())/1e9, "the Unix time of the last event: after the sleep")
		assert.LessOrEqual(t, last, float64(time.Now().UnixNano())/1e9, "and not in the future")
		assert.Greater(t, last, times[0], "set again by the relist's events, after the backoff")
		assert.Equal(t, []float64{1, 0, 1, 0}, p.Values("cms watch_open"), "open while each stream was, closed when Run returned")
	})
}

// A LIST, and a watch that closes at once with no event: a very short watch, counted
// as such and as the reason of the relist.
func TestReflectorMetricsCountAVeryShortWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := newScriptedLW(t, listStep("10", cmUID("a", "9")), watchClose(0), listStep("12"), watchHold())
		p := &fakeMetrics{}
		r, err := NewReflector(lw, &recordingStore{}, Options[cmT]{Name: "cms", InitialList: PagedList, MetricsProvider: p})
		require.NoError(t, err)
		runUntilExhausted(t, r, lw)
		assert.Equal(t, 1, p.count("cms short_watches"), p.String())
		assert.Equal(t, 1, p.count("cms relists{very_short_watch}"))
		assert.Equal(t, 2, p.count("cms lists"))
		assert.Equal(t, []float64{1, 0}, p.Values("cms items_in_list"))
	})
}

// A watch request the server refuses (429, then a backoff) opened no watch: watches
// counts the streams the server opened, and each of them ends in the per-watch
// metrics exactly once.
func TestReflectorMetricsCountOnlyTheWatchesTheServerOpened(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := newScriptedLW(t, listStep("10", cmUID("a", "9")), watchErr(errTooManyRequests()),
			watchClose(time.Minute, modified(cmUID("a", "11"))), watchHold())
		p := &fakeMetrics{}
		r, err := NewReflector(lw, &recordingStore{}, Options[cmT]{Name: "cms", InitialList: PagedList, MetricsProvider: p})
		require.NoError(t, err)
		runUntilExhausted(t, r, lw)
		assert.Equal(t, 2, p.count("cms watches"), "the refused request is no watch: %s", p)
		assert.Equal(t, []float64{1, 0}, p.Values("cms items_in_watch"), "each opened watch ended once")
		assert.Equal(t, 2, p.count("cms watch_duration"))
		assert.Zero(t, p.count("cms short_watches"))
		assert.Equal(t, []float64{1, 0, 1, 0}, p.Values("cms watch_open"), "not open while the refused request backed off")
	})
}

// A watch-list stream that closes before its end bookmark, and one that fails, are
// watches that opened: each is counted and its end recorded like a watch's; the cut
// one starts the whole fetch over, which counts as a relist.
func TestReflectorMetricsRecordEveryWatchListStreamThatEndsEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := newScriptedLW(t,
			watchClose(time.Minute, added(cmUID("a", "5"))),                  // S4: cut before its end bookmark
			watchClose(0, added(cmUID("a", "5")), errorEvent(errInternal())), // fails → LIST
			listStep("12", cmUID("a", "5")),
			watchHold(),
		)
		p := &fakeMetrics{}
		r, err := NewReflector(lw, &recordingStore{}, Options[cmT]{Name: "cms", MetricsProvider: p})
		require.NoError(t, err)
		runUntilExhausted(t, r, lw)
		assert.Equal(t, 3, p.count("cms watches"), "two watch-list streams and the watch: %s", p)
		assert.Equal(t, []float64{1, 1, 0}, p.Values("cms items_in_watch"), "each stream's end, with its events")
		assert.Equal(t, 3, p.count("cms watch_duration"))
		assert.Equal(t, 1, p.count("cms relists{"+RelistWatchListEndedEarly+"}"), "the cut stream's fetch started over")
		assert.Equal(t, []float64{1}, p.Values("cms lists"), "one list replaced the store: the LIST")
	})
}

func TestRelistReasons(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{errExpired(), RelistExpired},
		{errTooLargeRV(), RelistTooLargeRV},
		{fmt.Errorf("cms: %w", ErrVeryShortWatch), RelistVeryShortWatch},
		{errWatchListEndedEarly, RelistWatchListEndedEarly},
		{errInternal(), RelistOther},
		{nil, RelistOther},
	} {
		assert.Equal(t, c.want, RelistReason(c.err), "%v", c.err)
	}
}

// A provider whose methods return nil gets metrics that drop their values.
func TestANilMetricIsDropped(t *testing.T) {
	m := newReflectorMetrics(nilProvider{}, "x")
	require.NotNil(t, m)
	m.listStarted()
	m.listed(3)
	m.watchStarted(time.Now())
	m.event("ADDED", false)
	m.watchEnded(ErrVeryShortWatch)
	m.watchClosed()
	m.relisted(errExpired())
	m.synced("12")
	assert.Nil(t, newReflectorMetrics(nil, "x"), "no provider, no metrics")
}

type nilProvider struct{}

func (nilProvider) NewListsMetric(string) CounterMetric              { return nil }
func (nilProvider) NewListDurationMetric(string) SummaryMetric       { return nil }
func (nilProvider) NewItemsInListMetric(string) SummaryMetric        { return nil }
func (nilProvider) NewWatchesMetric(string) CounterMetric            { return nil }
func (nilProvider) NewShortWatchesMetric(string) CounterMetric       { return nil }
func (nilProvider) NewWatchDurationMetric(string) SummaryMetric      { return nil }
func (nilProvider) NewItemsInWatchMetric(string) SummaryMetric       { return nil }
func (nilProvider) NewLastResourceVersionMetric(string) GaugeMetric  { return nil }
func (nilProvider) NewRelistsMetric(string) LabeledCounterMetric     { return nil }
func (nilProvider) NewWatchEventsMetric(string) LabeledCounterMetric { return nil }
func (nilProvider) NewLastEventTimeMetric(string) GaugeMetric        { return nil }
func (nilProvider) NewWatchOpenMetric(string) GaugeMetric            { return nil }

// The metrics cost nothing per watch event: with no provider, and with a provider
// whose metrics do not allocate, handling an event allocates the same.
func TestMetricsAddNoAllocationPerWatchEvent(t *testing.T) {
	perEvent := func(p MetricsProvider) float64 {
		w := NewFakeWatch[cmT]()
		lw := ListWatch[cmT]{
			ListFunc: func(context.Context, metav1.ListOptions) (ListResult[cmT], error) {
				return ListResult[cmT]{ResourceVersion: "1"}, nil
			},
			WatchFunc: func(context.Context, metav1.ListOptions) (Watch[cmT], error) { return w, nil },
		}
		r, err := NewReflector(lw, &countingStore{}, Options[cmT]{InitialList: PagedList, MetricsProvider: p})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		// Goroutine owned by this test: Run, ended by cancel below.
		go func() { defer close(done); r.Run(ctx) }()
		obj := cmUID("a", "2")
		for range 100 { // warm up: the watch is open and every path taken once
			w.Modify(obj)
		}
		allocs := testing.AllocsPerRun(1000, func() { w.Modify(obj) })
		cancel()
		<-done
		return allocs
	}
	without := perEvent(nil)
	with := perEvent(allocFreeProvider{})
	assert.Equal(t, without, with, "allocations per event without metrics %v, with %v", without, with)
}

// allocFreeProvider's metrics record into atomics-free sinks that never allocate.
type allocFreeProvider struct{ nilProvider }

type sink struct{}

func (sink) Inc()            {}
func (sink) Set(float64)     {}
func (sink) Observe(float64) {}

type labeledSink struct{}

func (labeledSink) Inc(string) {}

func (allocFreeProvider) NewWatchesMetric(string) CounterMetric            { return sink{} }
func (allocFreeProvider) NewLastResourceVersionMetric(string) GaugeMetric  { return sink{} }
func (allocFreeProvider) NewWatchEventsMetric(string) LabeledCounterMetric { return labeledSink{} }
func (allocFreeProvider) NewLastEventTimeMetric(string) GaugeMetric        { return sink{} }
func (allocFreeProvider) NewWatchOpenMetric(string) GaugeMetric            { return sink{} }

// countingStore is a Store that only counts.
type countingStore struct{ n int }

func (s *countingStore) Add(cmT) error               { s.n++; return nil }
func (s *countingStore) Update(cmT) error            { s.n++; return nil }
func (s *countingStore) Delete(cmT) error            { s.n++; return nil }
func (s *countingStore) Replace([]cmT, string) error { return nil }
func (s *countingStore) Resync() error               { return nil }

// TestEveryRelistPathCountsAndOnlyThoseDo is the relist counter's definition
// (relists.go), path by path: every fetch of the whole state the server answered after
// an earlier answered fetch counts once, under the first cause; a fetch the server
// refused, and the first list, count nothing.
func TestEveryRelistPathCountsAndOnlyThoseDo(t *testing.T) {
	for _, tc := range []struct {
		name   string
		list   InitialList
		script []step
		want   map[string]int // relists by reason
	}{
		{"a first LIST refused, then answered: no relist", PagedList,
			[]step{listErr(apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("no"))), listStep("10", cmUID("a", "9")), watchHold()},
			map[string]int{}},
		{"a first watch-list refused with 429, then answered: no relist", WatchList,
			[]step{watchErr(errTooManyRequests()), watchHold(added(cmUID("a", "5")), bookmarked(initialEventsEnd("9")))},
			map[string]int{}},
		{"a watch's 410 (W8), then a LIST: one relist", PagedList,
			[]step{listStep("10", cmUID("a", "9")), watchClose(0, errorEvent(errExpired())), listStep("12", cmUID("a", "9")), watchHold()},
			map[string]int{RelistExpired: 1}},
		{"a watch's 410, the relist's LIST 410 again and retried at RV \"\" (L3): one relist, not two", PagedList,
			[]step{listStep("10", cmUID("a", "9")), watchClose(0, errorEvent(errExpired())), listErr(errExpired()), listStep("12", cmUID("a", "9")), watchHold()},
			map[string]int{RelistExpired: 1}},
		{"a very short watch (W7), then a LIST: one relist", PagedList,
			[]step{listStep("10", cmUID("a", "9")), watchClose(0), listStep("12"), watchHold()},
			map[string]int{RelistVeryShortWatch: 1}},
		{"a 410 during a watch-list's initial events (S3): one relist", WatchList,
			[]step{watchClose(0, added(cmUID("a", "5")), errorEvent(errExpired())), watchHold(added(cmUID("a", "5")), bookmarked(initialEventsEnd("9")))},
			map[string]int{RelistExpired: 1}},
		{"a watch-list stream that ends before its end bookmark (S4): one relist", WatchList,
			[]step{watchClose(time.Minute, added(cmUID("a", "5"))), watchHold(added(cmUID("a", "5")), bookmarked(initialEventsEnd("9")))},
			map[string]int{RelistWatchListEndedEarly: 1}},
		{"a watch-list that fails partway and falls back to a LIST (S5): one relist", WatchList,
			[]step{watchClose(0, added(cmUID("a", "5")), errorEvent(errInternal())), listStep("12", cmUID("a", "5")), watchHold()},
			map[string]int{RelistOther: 1}},
		{"a watch-list refused outright (an old server), then a LIST: no relist", WatchList,
			[]step{watchErr(apierrors.NewBadRequest("sendInitialEvents is not supported")), listStep("12", cmUID("a", "5")), watchHold()},
			map[string]int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lw := newScriptedLW(t, tc.script...)
				p := &fakeMetrics{}
				r, err := NewReflector(lw, &recordingStore{}, Options[cmT]{Name: "cms", InitialList: tc.list, MetricsProvider: p})
				require.NoError(t, err)
				runUntilExhausted(t, r, lw)
				got := map[string]int{}
				for _, reason := range []string{RelistExpired, RelistTooLargeRV, RelistVeryShortWatch, RelistConnectionRefused, RelistWatchListEndedEarly, RelistOther} {
					if n := p.count("cms relists{" + reason + "}"); n > 0 {
						got[reason] = n
					}
				}
				assert.Equal(t, tc.want, got, "%s", p)
			})
		})
	}
}
