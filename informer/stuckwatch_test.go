package informer_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
)

// syncedInformer runs an informer named "cms" over src until the end of the test and
// waits until it has synced. Call it inside a synctest bubble.
func syncedInformer(t *testing.T, p pipeline, src *fakeapi.Server[*corev1.ConfigMap]) (*informer.SharedIndexInformer[*corev1.ConfigMap], func()) {
	t.Helper()
	inf := newInformer(p, src, informer.Options[*corev1.ConfigMap]{Name: "cms", Logger: logBufferLogger()})
	_, stop := running(t, inf)
	synctest.Wait()
	require.True(t, inf.HasSynced())
	return inf, stop
}

func TestAWatchThatKeepsDeliveringEventsOrBookmarksIsHealthy(t *testing.T) {
	for _, p := range pipelines {
		t.Run(p.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				obj := src.Create(cm("a"))
				inf, _ := syncedInformer(t, p, src)
				for i := range 10 {
					time.Sleep(90 * time.Second) // less than DefaultWatchStuckAfter
					assert.NoError(t, inf.WatchHealthy(0), "after %d quiet periods", i)
					if i%2 == 0 {
						obj = src.Update(obj)
					} else {
						src.Bookmark() // what the watch cache sends a quiet resource
					}
					synctest.Wait()
				}
				assert.NoError(t, inf.WatchHealthy(0))
			})
		})
	}
}

func TestAWatchSilentForLongerThanTheThresholdIsStuck(t *testing.T) {
	for _, p := range pipelines {
		t.Run(p.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				src.Create(cm("a"))
				inf, _ := syncedInformer(t, p, src)

				time.Sleep(30 * time.Second)
				assert.NoError(t, inf.WatchHealthy(30*time.Second), "silent for exactly the threshold is not yet stuck")
				time.Sleep(time.Second)
				err := inf.WatchHealthy(30 * time.Second)
				require.ErrorIs(t, err, informer.ErrWatchStuck)
				assert.Equal(t, "watch stuck (informer cms): its watch is open but has delivered nothing — no event, no bookmark — for 31s, longer than 30s", err.Error())
				assert.True(t, inf.WatchActivity().Open, "open, and silent")

				assert.NoError(t, inf.WatchHealthy(0), "31s is well within the default threshold")
				time.Sleep(informer.DefaultWatchStuckAfter - 30*time.Second)
				assert.ErrorIs(t, inf.WatchHealthy(0), informer.ErrWatchStuck, "silent for longer than two bookmark intervals")
			})
		})
	}
}

func TestAWatchDownForLongerThanTheThresholdIsStuck(t *testing.T) {
	for _, p := range pipelines {
		t.Run(p.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				src.Create(cm("a"))
				inf, _ := syncedInformer(t, p, src)

				time.Sleep(30 * time.Second)
				outage := fakeapi.StatusError(500, "etcd is down")
				src.FailLists(outage)
				src.FailWatches(outage)
				src.CloseWatches() // the watch ends; every watch and list after it fails, with backoffs between
				synctest.Wait()
				assert.NoError(t, inf.WatchHealthy(0), "down for a moment")

				time.Sleep(informer.DefaultWatchStuckAfter)
				err := inf.WatchHealthy(0)
				require.ErrorIs(t, err, informer.ErrWatchStuck)
				assert.Contains(t, err.Error(), "watch stuck (informer cms): no watch open for 2m0s, and nothing received for 2m30s, longer than 2m0s")
				assert.Contains(t, err.Error(), "last list/watch error: ", "why it is down")
				assert.Contains(t, err.Error(), "etcd is down")
				assert.False(t, inf.WatchActivity().Open)
			})
		})
	}
}

func TestAStuckWatchIsHealthyAgainOnceSomethingArrives(t *testing.T) {
	for _, p := range pipelines {
		t.Run(p.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				obj := src.Create(cm("a"))
				inf, _ := syncedInformer(t, p, src)

				time.Sleep(3 * time.Minute)
				require.ErrorIs(t, inf.WatchHealthy(0), informer.ErrWatchStuck, "silent")
				src.Update(obj)
				synctest.Wait()
				assert.NoError(t, inf.WatchHealthy(0), "an event")

				time.Sleep(3 * time.Minute)
				require.ErrorIs(t, inf.WatchHealthy(0), informer.ErrWatchStuck, "silent again")
				src.Bookmark()
				synctest.Wait()
				assert.NoError(t, inf.WatchHealthy(0), "a bookmark")

				outage := fakeapi.StatusError(500, "etcd is down")
				src.FailLists(outage)
				src.FailWatches(outage)
				src.CloseWatches()
				time.Sleep(3 * time.Minute)
				require.ErrorIs(t, inf.WatchHealthy(0), informer.ErrWatchStuck, "down")
				src.FailLists(nil)
				src.FailWatches(nil)
				time.Sleep(time.Minute) // past the backoff in progress
				synctest.Wait()
				assert.NoError(t, inf.WatchHealthy(0), "a relist and a new watch, once the server is back")
			})
		})
	}
}

func TestAWatchIsNeverStuckBeforeTheInformerSyncsOrAfterItStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](src, informer.Options[*corev1.ConfigMap]{Name: "cms", Logger: logBufferLogger()})
		assert.NoError(t, inf.WatchHealthy(0), "not started")
		assert.Zero(t, inf.WatchActivity(), "not started")

		src.FailLists(fakeapi.StatusError(500, "etcd is down"))
		src.FailWatches(fakeapi.StatusError(500, "etcd is down"))
		_, stop := running(t, inf)
		time.Sleep(10 * time.Minute)
		require.False(t, inf.HasSynced())
		assert.NoError(t, inf.WatchHealthy(0), "not synced: readiness's concern, not liveness's")

		src.FailLists(nil)
		src.FailWatches(nil)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.True(t, inf.HasSynced())
		stop()
		time.Sleep(10 * time.Minute)
		assert.NoError(t, inf.WatchHealthy(0), "stopped: no watch to check")
	})
}

// A relist that keeps receiving pages is healthy however long it takes in all: here
// ten pages, 20s each, 3m20s with no watch open. One whose pages stop is stuck, and the
// error says it is relisting.
func TestALongRelistThatReceivesPagesIsHealthyAndOneThatStallsIsStuck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration // per page
	}{
		{"a page every 20s", 20 * time.Second},
		{"a page that takes 3m", 3 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				for i := range 10 {
					src.Create(cm(fmt.Sprintf("cm-%d", i)))
				}
				inf := newInformer(classic, src, informer.Options[*corev1.ConfigMap]{Name: "cms", PageSize: 1, Logger: logBufferLogger()})
				running(t, inf)
				synctest.Wait()
				require.True(t, inf.HasSynced())

				src.PageLists(tc.delay)
				src.Compact() // the watch ends with 410 (W8): a relist after a backoff, page by page
				for !inf.WatchActivity().Listing {
					time.Sleep(100 * time.Millisecond)
				}
				began := inf.WatchActivity().ListSince
				if tc.delay == 3*time.Minute {
					time.Sleep(informer.DefaultWatchStuckAfter + time.Second - time.Since(began))
					err := inf.WatchHealthy(0)
					require.ErrorIs(t, err, informer.ErrWatchStuck)
					assert.Equal(t, "watch stuck (informer cms): relisting since 2m1s ago with no watch open, no page yet, nothing received for 2m1s, longer than 2m0s", err.Error())
					return
				}
				for range 19 { // to 3m10s: past the threshold since the watch ended
					time.Sleep(10 * time.Second)
					require.NoError(t, inf.WatchHealthy(0), "a page arrived within the last 20s (at %v)", inf.WatchActivity().LastPage)
				}
				a := inf.WatchActivity()
				assert.True(t, a.Listing && !a.Open, "still relisting, no watch open")
				time.Sleep(20 * time.Second)
				synctest.Wait()
				a = inf.WatchActivity()
				assert.True(t, !a.Listing && a.Open, "the relist is over and a watch is open: %+v", a)
				assert.NoError(t, inf.WatchHealthy(0))
			})
		})
	}
}
