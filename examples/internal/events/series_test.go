package events

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// forget deletes a stored Event, as the apiserver's TTL or a user's delete would.
func (s *eventSink) forget(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.stored, name)
}

func (s *eventSink) patched() []eventsv1.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]eventsv1.Event(nil), s.patches...)
}

func (s *eventSink) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

// counts returns the series.count of each PATCH, in order.
func counts(evs []eventsv1.Event) []int32 {
	var out []int32
	for _, ev := range evs {
		if ev.Series == nil {
			out = append(out, 0)
			continue
		}
		out = append(out, ev.Series.Count)
	}
	return out
}

func warn(t *testing.T, r *Recorder, obj *corev1.Pod, note string) *eventsv1.Event {
	t.Helper()
	ev, err := r.Record(t.Context(), obj, TypeWarning, "ErrResourceExists", "Sync", note)
	require.NoError(t, err)
	return ev
}

func TestRepeatsAreCountedOnOneEvent(t *testing.T) {
	t.Run("ten identical warnings are one POST and nine PATCHes of its series", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &eventSink{}
			r := newTestRecorder(t, sink, Options{})
			start := time.Now()
			var last *eventsv1.Event
			for range 10 {
				last = warn(t, r, pod(), "exists")
				time.Sleep(400 * time.Millisecond) // 10 in 4s, as foo-controller's retries
			}

			posted := sink.events()
			require.Len(t, posted, 1)
			name := posted[0].Name
			paths := sink.requests()
			assert.Equal(t, "POST /apis/events.k8s.io/v1/namespaces/shop/events", paths[0])
			for _, p := range paths[1:] {
				assert.Equal(t, "PATCH /apis/events.k8s.io/v1/namespaces/shop/events/"+name, p)
			}
			assert.Equal(t, []int32{2, 3, 4, 5, 6, 7, 8, 9, 10}, counts(sink.patched()))

			assert.Equal(t, name, last.Name, "Record returns the patched Event")
			require.NotNil(t, last.Series)
			assert.Equal(t, int32(10), last.Series.Count)
			assert.True(t, last.EventTime.Time.Equal(start), "eventTime stays at the first occurrence")
			assert.True(t, last.Series.LastObservedTime.Time.Equal(start.Add(9*400*time.Millisecond)),
				"lastObservedTime is the tenth occurrence: %v", last.Series.LastObservedTime)
		})
	})
	t.Run("the patch carries only the series", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &eventSink{}
			r := newTestRecorder(t, sink, Options{})
			warn(t, r, pod(), "exists")
			warn(t, r, pod(), "exists")
			p := sink.patched()[0]
			require.NotNil(t, p.Series)
			assert.Equal(t, int32(2), p.Series.Count)
			assert.True(t, p.Series.LastObservedTime.Time.Equal(time.Now().Truncate(time.Microsecond)))
			p.Series = nil
			assert.Equal(t, eventsv1.Event{}, p, "nothing else")
		})
	})
	t.Run("a new resourceVersion of the object is still a repeat", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &eventSink{}
			r := newTestRecorder(t, sink, Options{})
			warn(t, r, pod(), "exists")
			changed := pod()
			changed.ResourceVersion = "18"
			warn(t, r, changed, "exists")
			assert.Len(t, sink.events(), 1)
			assert.Len(t, sink.patched(), 1)
		})
	})
	t.Run("events that differ in anything else are separate Events", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &eventSink{}
			r := newTestRecorder(t, sink, Options{})
			other := pod()
			other.Name, other.UID = "web-1", "uid-2"
			recreated := pod()
			recreated.UID = "uid-3" // same name, a new object
			for _, rec := range []func() error{
				func() error { _, err := r.Record(t.Context(), pod(), TypeWarning, "R", "A", "n"); return err },
				func() error { _, err := r.Record(t.Context(), other, TypeWarning, "R", "A", "n"); return err },
				func() error { _, err := r.Record(t.Context(), recreated, TypeWarning, "R", "A", "n"); return err },
				func() error { _, err := r.Record(t.Context(), pod(), TypeNormal, "R", "A", "n"); return err },
				func() error { _, err := r.Record(t.Context(), pod(), TypeWarning, "R2", "A", "n"); return err },
				func() error { _, err := r.Record(t.Context(), pod(), TypeWarning, "R", "A2", "n"); return err },
				func() error { _, err := r.Record(t.Context(), pod(), TypeWarning, "R", "A", "n2"); return err },
			} {
				require.NoError(t, rec())
			}
			assert.Len(t, sink.events(), 7)
			assert.Empty(t, sink.patched())
		})
	})
}

func TestTheSeriesWindow(t *testing.T) {
	t.Run("repeats at most 6 minutes apart keep one series open for as long as they come", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &eventSink{}
			r := newTestRecorder(t, sink, Options{})
			for range 4 {
				warn(t, r, pod(), "exists")
				time.Sleep(seriesWindow)
			}
			assert.Len(t, sink.events(), 1)
			assert.Equal(t, []int32{2, 3, 4}, counts(sink.patched()))
		})
	})
	t.Run("a repeat more than 6 minutes after the last one starts a new Event", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &eventSink{}
			r := newTestRecorder(t, sink, Options{})
			warn(t, r, pod(), "exists")
			warn(t, r, pod(), "exists")
			time.Sleep(seriesWindow + time.Second)
			ev := warn(t, r, pod(), "exists")
			posted := sink.events()
			require.Len(t, posted, 2)
			assert.NotEqual(t, posted[0].Name, posted[1].Name)
			assert.Nil(t, ev.Series, "the new Event starts a count of its own")
			assert.True(t, ev.EventTime.Time.Equal(time.Now()))
		})
	})
}

func TestAnEventGoneFromTheServerIsCreatedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &eventSink{}
		r := newTestRecorder(t, sink, Options{})
		start := time.Now()
		first := warn(t, r, pod(), "exists")
		time.Sleep(time.Second)
		warn(t, r, pod(), "exists")
		sink.forget(first.Name) // expired, or deleted by someone
		time.Sleep(time.Second)

		again := warn(t, r, pod(), "exists")
		assert.Equal(t, []string{
			"POST /apis/events.k8s.io/v1/namespaces/shop/events",
			"PATCH /apis/events.k8s.io/v1/namespaces/shop/events/" + first.Name,
			"PATCH /apis/events.k8s.io/v1/namespaces/shop/events/" + first.Name,
			"POST /apis/events.k8s.io/v1/namespaces/shop/events",
		}, sink.requests())
		assert.NotEqual(t, first.Name, again.Name)
		require.NotNil(t, again.Series, "the new Event carries the count so far")
		assert.Equal(t, int32(3), again.Series.Count)
		assert.True(t, again.Series.LastObservedTime.Time.Equal(time.Now()))
		assert.True(t, again.EventTime.Time.Equal(start), "and starts at the first occurrence")

		warn(t, r, pod(), "exists")
		assert.Equal(t, "PATCH /apis/events.k8s.io/v1/namespaces/shop/events/"+again.Name, sink.requests()[4],
			"later repeats patch the new Event")
		assert.Equal(t, int32(4), sink.patched()[2].Series.Count)
	})
}

func TestFailedWritesStillCount(t *testing.T) {
	t.Run("a failed PATCH is returned and its occurrence is carried by the next one", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &eventSink{}
			r := newTestRecorder(t, sink, Options{})
			first := warn(t, r, pod(), "exists")
			sink.status, sink.body = http.StatusInternalServerError,
				`{"apiVersion":"v1","kind":"Status","status":"Failure","code":500,"reason":"InternalError","message":"etcd down"}`
			_, err := r.Record(t.Context(), pod(), TypeWarning, "ErrResourceExists", "Sync", "exists")
			require.Error(t, err)
			assert.True(t, apierrors.IsInternalError(err), "%v", err)
			assert.Contains(t, err.Error(), "events: patch Warning ErrResourceExists about Pod shop/web-0")

			sink.status = 0
			last := warn(t, r, pod(), "exists")
			assert.Equal(t, first.Name, last.Name, "the Event is not created again")
			assert.Equal(t, int32(3), last.Series.Count)
		})
	})
	t.Run("when the first POST failed, the next one creates the Event with the count so far", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &eventSink{status: http.StatusServiceUnavailable,
				body: `{"apiVersion":"v1","kind":"Status","status":"Failure","code":503,"reason":"ServiceUnavailable","message":"try later"}`}
			r := newTestRecorder(t, sink, Options{})
			start := time.Now()
			_, err := r.Record(t.Context(), pod(), TypeWarning, "ErrResourceExists", "Sync", "exists")
			require.Error(t, err)
			time.Sleep(time.Second)

			sink.status = 0
			ev := warn(t, r, pod(), "exists")
			posted := sink.events()
			require.Len(t, posted, 2)
			require.NotNil(t, ev.Series)
			assert.Equal(t, int32(2), ev.Series.Count)
			assert.True(t, ev.EventTime.Time.Equal(start))
		})
	})
}

func TestConcurrentRepeatsMakeOneEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &eventSink{}
		r := newTestRecorder(t, sink, Options{})
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() { warn(t, r, pod(), "exists") })
		}
		wg.Wait()
		assert.Len(t, sink.events(), 1, "one POST, however the calls interleave")
		got := counts(sink.patched())
		want := make([]int32, 0, 19)
		for n := int32(2); n <= 20; n++ {
			want = append(want, n)
		}
		assert.Equal(t, want, got, "each PATCH counts one more than the last")
	})
}

func TestWaitingForAnotherWriteEndsWithTheCallersContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTestRecorder(t, &eventSink{block: true}, Options{Timeout: 2 * time.Second})
		go r.Eventf(t.Context(), pod(), TypeWarning, "ErrResourceExists", "Sync", "exists")
		time.Sleep(time.Second) // the first call holds the series until its timeout, at 2s

		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		_, err := r.Record(ctx, pod(), TypeWarning, "ErrResourceExists", "Sync", "exists")
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "events: wait for the previous write of Warning ErrResourceExists about Pod shop/web-0")
		assert.Equal(t, 500*time.Millisecond, time.Since(start))
	})
}

func TestTheCacheIsBounded(t *testing.T) {
	t.Run("the least recently observed event is forgotten first", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			sink := &eventSink{}
			r := newTestRecorder(t, sink, Options{})
			r.series = newSeriesCache(2)
			warn(t, r, pod(), "a")
			warn(t, r, pod(), "b")
			warn(t, r, pod(), "a") // a is now the most recent; b the least
			warn(t, r, pod(), "c") // evicts b
			assert.Equal(t, 2, r.series.len())

			warn(t, r, pod(), "a")
			assert.Len(t, sink.events(), 3, "a is still known: patched")
			warn(t, r, pod(), "b")
			assert.Len(t, sink.events(), 4, "b was forgotten: a new Event")
			notes := []string{}
			for _, ev := range sink.events() {
				notes = append(notes, ev.Note)
			}
			assert.Equal(t, []string{"a", "b", "c", "b"}, notes)
			assert.Equal(t, 2, r.series.len())
		})
	})
	t.Run("the default keeps 4096 series", func(t *testing.T) {
		r := newTestRecorder(t, &eventSink{}, Options{})
		for i := range 5000 {
			r.series.observe(seriesKey{note: strconv.Itoa(i)}, time.Now())
		}
		assert.Equal(t, 4096, r.series.len())
	})
}
