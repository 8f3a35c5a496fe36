package informer_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
)

func TestInformerDeliversTheInitialListThenLiveChanges(t *testing.T) {
	for _, q := range pipelines {
		t.Run(q.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				a := src.Create(cm("a"))
				src.Create(cm("b"))
				inf := newInformer(q, src, informer.Options[*corev1.ConfigMap]{})
				rec := &recorder{}
				reg, err := inf.AddEventHandler(rec)
				require.NoError(t, err)
				running(t, inf)
				synctest.Wait()

				require.True(t, inf.HasSynced())
				require.True(t, reg.HasSynced())
				initial := rec.get()
				require.Len(t, initial, 2)
				for _, e := range initial {
					assert.Equal(t, "add", e.kind)
					assert.True(t, e.isInInitialList, "%v is part of the initial list", e)
				}

				a.Data = map[string]string{"k": "v"}
				a2 := src.Update(a)
				src.Create(cm("c"))
				a3 := src.Delete(a2)
				synctest.Wait()

				later := rec.get()[2:]
				require.Len(t, later, 3)
				var forA, forC []event
				for _, e := range later {
					if e.name == "a" {
						forA = append(forA, e)
					} else {
						forC = append(forC, e)
					}
				}
				assert.Equal(t, []event{
					{kind: "update", name: "a", rv: a2.ResourceVersion, oldRV: a.ResourceVersion},
					{kind: "delete", name: "a", rv: a3.ResourceVersion},
				}, forA, "one object's changes arrive in order")
				require.Len(t, forC, 1)
				assert.Equal(t, "add", forC[0].kind)
				assert.False(t, forC[0].isInInitialList, "an object created after the list is not in the initial list")

				keys := inf.Indexer().ListKeys()
				assert.ElementsMatch(t, []string{"ns/b", "ns/c"}, keys)
			})
		})
	}
}

// The question newcomers ask (FAQ 21): "why do Add events arrive while
// WaitForCacheSync is still waiting?" Because "synced" means "the initial list has been delivered": the
// initial objects reach the handler as adds (isInInitialList=true) before — and in
// order for — the sync to complete.
func TestAddEventsArriveWhileWaitForCacheSyncIsStillWaiting(t *testing.T) {
	for _, q := range pipelines {
		t.Run(q.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				for _, n := range []string{"a", "b", "c"} {
					src.Create(cm(n))
				}
				inf := newInformer(q, src, informer.Options[*corev1.ConfigMap]{})
				gate := make(chan struct{})
				var adds []bool
				reg, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
					AddFunc: func(_ *corev1.ConfigMap, isInInitialList bool) {
						adds = append(adds, isInInitialList)
						<-gate // the handler is still busy with the initial list
					},
				})
				require.NoError(t, err)
				ctx, _ := running(t, inf)
				waited := make(chan error, 1)
				go func() { waited <- informer.WaitForCacheSync(ctx, reg) }()
				synctest.Wait()

				require.Equal(t, []bool{true}, adds, "an initial Add arrived ...")
				select {
				case err := <-waited:
					t.Fatalf("... but WaitForCacheSync returned (%v) before the handler saw the initial list", err)
				default:
				}
				close(gate)
				synctest.Wait()
				require.NoError(t, <-waited)
				assert.Equal(t, []bool{true, true, true}, adds)
			})
		})
	}
}

func TestARelistThatNoLongerContainsAnObjectDeliversADeleteWithATombstone(t *testing.T) {
	for _, q := range pipelines {
		t.Run(q.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				gone := src.Create(cm("gone"))
				src.Create(cm("stays"))
				inf := newInformer(q, src, informer.Options[*corev1.ConfigMap]{})
				rec := &recorder{}
				_, err := inf.AddEventHandler(rec)
				require.NoError(t, err)
				deleted := make(chan informer.DeletedObject[*corev1.ConfigMap], 1)
				_, err = inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
					DeleteFunc: func(d informer.DeletedObject[*corev1.ConfigMap]) { deleted <- d },
				})
				require.NoError(t, err)
				running(t, inf)
				synctest.Wait()

				// The delete happens while the watch is down and its history is
				// compacted: the reflector must relist, and only the relist's
				// absence of "gone" tells the informer it was deleted.
				src.DeleteSilently(gone)
				src.Compact()
				time.Sleep(time.Minute) // fake time: past any backoff
				synctest.Wait()

				assert.Contains(t, rec.summary(), "delete gone (tombstone)")
				assert.Equal(t, []string{"ns/stays"}, inf.Indexer().ListKeys())
				// The handler gets the last state the cache had, never nil, and the
				// tombstone holds that same object under the key it was cached under.
				d := <-deleted
				require.NotNil(t, d.OptionalObj)
				assert.Equal(t, gone.ResourceVersion, d.OptionalObj.ResourceVersion)
				require.NotNil(t, d.FinalStateUnknown)
				assert.Same(t, d.OptionalObj, d.FinalStateUnknown.Obj)
				assert.Equal(t, "ns/gone", d.FinalStateUnknown.Key)
				assert.Equal(t, "ns/gone", d.GetKey())
				// An unchanged object seen again by the relist is an update with the
				// same resourceVersion. Pitfall (as in client-go): it is treated like a
				// resync, yet reaches a handler without a resync period, because a
				// listener counts as "due" until the first resync check says otherwise.
				var stays []event
				for _, e := range rec.get() {
					if e.name == "stays" && e.kind == "update" {
						stays = append(stays, e)
					}
				}
				require.Len(t, stays, 1)
				assert.Equal(t, stays[0].oldRV, stays[0].rv)
			})
		})
	}
}

func TestAHandlerAddedToARunningInformerGetsTheCacheReplayedAsInitialAdds(t *testing.T) {
	for _, q := range pipelines {
		t.Run(q.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				src.Create(cm("a"))
				src.Create(cm("b"))
				inf := newInformer(q, src, informer.Options[*corev1.ConfigMap]{})
				running(t, inf)
				synctest.Wait()
				require.True(t, inf.HasSynced())

				gate := make(chan struct{})
				rec := &recorder{}
				reg, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
					AddFunc: func(obj *corev1.ConfigMap, initial bool) {
						<-gate
						rec.OnAdd(obj, initial)
					},
					UpdateFunc: rec.OnUpdate,
				})
				require.NoError(t, err)
				synctest.Wait()
				assert.False(t, reg.HasSynced(), "the late handler has not handled its replay yet")
				close(gate)
				src.Create(cm("c"))
				synctest.Wait()

				assert.True(t, reg.HasSynced())
				got := rec.get()
				require.Len(t, got, 3)
				assert.True(t, got[0].isInInitialList && got[1].isInInitialList, "replayed objects: %v", got)
				assert.Equal(t, "c", got[2].name)
				assert.False(t, got[2].isInInitialList)
			})
		})
	}
}

func TestRemovingAHandlerStopsItsNotificationsAndIsIdempotent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		inf := newInformer(classic, src, informer.Options[*corev1.ConfigMap]{})
		removed, kept := &recorder{}, &recorder{}
		reg, err := inf.AddEventHandler(removed)
		require.NoError(t, err)
		_, err = inf.AddEventHandler(kept)
		require.NoError(t, err)
		running(t, inf)
		src.Create(cm("before"))
		synctest.Wait()

		inf.RemoveEventHandler(reg)
		inf.RemoveEventHandler(reg) // a second removal is a no-op
		src.Create(cm("after"))
		synctest.Wait()

		assert.Equal(t, []string{"add before"}, removed.summary())
		assert.Equal(t, []string{"add before", "add after"}, kept.summary())
	})
}

func TestASlowHandlerDoesNotDelayAFastOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		logs := &logBuffer{}
		inf := newInformer(classic, src, informer.Options[*corev1.ConfigMap]{BacklogWarning: 4, Logger: logs.logger()})
		var slowSeen atomic.Int32
		slow, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
			AddFunc: func(*corev1.ConfigMap, bool) {
				time.Sleep(time.Second) // a 1-second handler (fake time)
				slowSeen.Add(1)
			},
		})
		require.NoError(t, err)
		fast := &recorder{}
		_, err = inf.AddEventHandler(fast)
		require.NoError(t, err)
		running(t, inf)
		synctest.Wait()

		start := time.Now()
		for i := range 10 {
			src.Create(cm(string(rune('a' + i))))
		}
		synctest.Wait()

		assert.Len(t, fast.get(), 10, "the fast handler got every event")
		assert.Equal(t, start, time.Now(), "... without any (fake) time passing")
		assert.EqualValues(t, 0, slowSeen.Load(), "while the slow one is still in its first call")
		assert.GreaterOrEqual(t, slow.HighWater(), 9)
		assert.Contains(t, logs.String(), "falling behind")

		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.EqualValues(t, 10, slowSeen.Load(), "the slow handler catches up in order")
		assert.Equal(t, 0, slow.Backlog())
	})
}

func TestAPanickingHandlerIsRecoveredAndOthersContinue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		logs := &logBuffer{}
		inf := newInformer(classic, src, informer.Options[*corev1.ConfigMap]{Logger: logs.logger()})
		panicky := &recorder{}
		_, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
			AddFunc: func(obj *corev1.ConfigMap, initial bool) {
				if obj.Name == "bad" {
					panic("boom")
				}
				panicky.OnAdd(obj, initial)
			},
		})
		require.NoError(t, err)
		other := &recorder{}
		_, err = inf.AddEventHandler(other)
		require.NoError(t, err)
		running(t, inf)
		synctest.Wait()
		src.Create(cm("bad"))
		src.Create(cm("good"))
		synctest.Wait()

		assert.Equal(t, []string{"add good"}, panicky.summary(), "the panicking handler goes on with the next object")
		assert.Equal(t, []string{"add bad", "add good"}, other.summary())
		assert.Contains(t, logs.String(), "key=ns/bad")
		assert.Contains(t, logs.String(), "boom")
	})
}

func TestResyncUpdatesReachOnlyTheHandlersThatAreDue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		src.Create(cm("a"))
		// The informer's own period (10s) is the check period; handlers registered
		// before Run with shorter periods lower it. An informer with period 0 would
		// never resync, whatever its handlers ask (as in client-go).
		inf := newInformer(classic, src, informer.Options[*corev1.ConfigMap]{ResyncPeriod: 10 * time.Second})
		every1s, every3s, never := &recorder{}, &recorder{}, &recorder{}
		for h, p := range map[*recorder]time.Duration{every1s: time.Second, every3s: 3 * time.Second, never: 0} {
			_, err := inf.AddEventHandlerWithOptions(h, informer.HandlerOptions{ResyncPeriod: &p})
			require.NoError(t, err)
		}
		running(t, inf)
		synctest.Wait()
		time.Sleep(3*time.Second + time.Millisecond)
		synctest.Wait()

		count := func(r *recorder) (n int) {
			for _, e := range r.get() {
				if e.kind == "update" {
					require.Equal(t, e.oldRV, e.rv, "a resync update carries the same resourceVersion")
					n++
				}
			}
			return n
		}
		assert.Equal(t, 3, count(every1s))
		assert.Equal(t, 1, count(every3s))
		assert.Equal(t, 0, count(never))
	})
}

func TestSettersRefuseAfterStartAndTransformAppliesToTheCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		c := cm("a", "big", "value")
		c.ManagedFields = nil
		src.Create(c)
		inf := newInformer(defaults, src, informer.Options[*corev1.ConfigMap]{})
		require.NoError(t, inf.SetTransform(func(obj *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			obj.Data = nil // strip what the controller does not need
			return obj, nil
		}))
		running(t, inf)
		synctest.Wait()

		assert.ErrorIs(t, inf.SetTransform(nil), informer.ErrStarted)
		assert.ErrorIs(t, inf.SetWatchErrorHandler(func(context.Context, error) {}), informer.ErrStarted)
		got, ok, err := inf.Indexer().GetByKey("ns/a")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Nil(t, got.Data)
	})
}

func TestWaitForCacheSyncReturnsTheListErrorInsteadOfHanging(t *testing.T) {
	cases := []struct {
		name    string
		err     error
		timeout time.Duration
		want    string
	}{
		{"a missing CRD (404) is reported at once", fakeapi.StatusError(404, "foos"), time.Hour, "not found"},
		{"missing RBAC (403) is reported at once", fakeapi.StatusError(403, "forbidden"), time.Hour, "forbidden"},
		{"a server error is reported when ctx ends", fakeapi.StatusError(500, "etcd is down"), 10 * time.Second, "etcd is down"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				src.FailLists(c.err)
				inf := newInformer(classic, src, informer.Options[*corev1.ConfigMap]{})
				running(t, inf)
				ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
				defer cancel()
				start := time.Now()
				err := informer.WaitForCacheSync(ctx, inf)
				require.ErrorIs(t, err, informer.ErrNotSynced)
				assert.Contains(t, err.Error(), c.want)
				assert.Less(t, time.Since(start), c.timeout+time.Second)
			})
		})
	}
}

func TestRunStopsEveryGoroutineAndLaterHandlersAreRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		src.Create(cm("a"))
		inf := newInformer(defaults, src, informer.Options[*corev1.ConfigMap]{ResyncPeriod: time.Second})
		_, err := inf.AddEventHandler(&recorder{})
		require.NoError(t, err)
		_, stop := running(t, inf)
		synctest.Wait()
		stop()
		assert.True(t, inf.IsStopped())
		_, err = inf.AddEventHandler(&recorder{})
		assert.ErrorIs(t, err, informer.ErrStopped)
		// synctest.Test itself fails if any goroutine of the bubble is left
		// blocked when this function returns: that is the leak check.
	})
}

// RealFIFO delivers every change in the order the API server made it, even while
// the processing loop is busy: it does not hold its lock while processing, so the
// reflector keeps queueing. (DeltaFIFO instead keeps one entry per object, so a later
// change to an already-queued object jumps ahead of other objects' changes; that
// rule is tested in package deltafifo. DeltaFIFO holds its lock while the informer
// processes an item, so the reflector waits there, which a synctest bubble cannot
// treat as idle — hence not here.)
func TestRealFIFOKeepsTheServersOrderAcrossObjects(t *testing.T) {
	want := []string{"add x", "update a", "add c", "delete a"}
	for _, q := range []pipeline{defaults} {
		t.Run(q.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				a := src.Create(cm("a"))
				// An index function runs on the processing loop: blocking it on
				// object "x" holds the loop while the reflector queues more changes.
				gate := make(chan struct{})
				inf := newInformer(q, src, informer.Options[*corev1.ConfigMap]{
					Indexers: indexer.Indexers[*corev1.ConfigMap]{"gate": func(obj *corev1.ConfigMap) ([]string, error) {
						if obj.Name == "x" {
							<-gate
						}
						return nil, nil
					}},
				})
				rec := &recorder{}
				_, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
					UpdateFunc: rec.OnUpdate, DeleteFunc: rec.OnDelete,
					AddFunc: func(obj *corev1.ConfigMap, initial bool) {
						if !initial {
							rec.OnAdd(obj, initial)
						}
					},
				})
				require.NoError(t, err)
				running(t, inf)
				synctest.Wait()
				src.Create(cm("x"))
				synctest.Wait() // the processing loop now waits inside the index function
				a.Data = map[string]string{"k": "v"}
				a2 := src.Update(a)
				src.Create(cm("c"))
				src.Delete(a2)
				synctest.Wait() // all three are queued
				close(gate)
				synctest.Wait()
				assert.Equal(t, want, rec.summary())
			})
		})
	}
}
