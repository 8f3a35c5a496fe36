package informer_test

import (
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
)

// A handler that changes the object it was given changes the cache, and the detector
// reports it with the informer, the key and a diff — on both pipelines, for objects
// cached by the first list and by a watch event.
func TestTheMutationDetectorReportsAHandlerThatChangesItsObject(t *testing.T) {
	for _, p := range pipelines {
		t.Run(p.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				src.Create(cm("listed", "k", "v"))
				var logs logBuffer
				var reported []*informer.MutationError
				inf := newInformer(p, src, informer.Options[*corev1.ConfigMap]{
					Name: "configmaps", Logger: logs.logger(),
					// A period longer than the test: the comparisons are CheckMutations'.
					MutationDetector: &informer.MutationDetector{Period: time.Hour, OnMutation: func(err *informer.MutationError) {
						reported = append(reported, err)
					}},
				})
				_, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
					AddFunc: func(obj *corev1.ConfigMap, _ bool) {
						if strings.HasPrefix(obj.Name, "bad") || obj.Name == "listed" {
							obj.Data["k"] = "changed by a handler" // the bug the detector is for
						}
					},
				})
				require.NoError(t, err)
				running(t, inf)
				synctest.Wait()
				src.Create(cm("good", "k", "v"))
				src.Create(cm("bad-watched", "k", "v"))
				synctest.Wait()

				cached, _, _ := inf.Indexer().GetByKey("ns/listed")
				assert.Equal(t, "changed by a handler", cached.Data["k"], "the handler changed the cache itself")

				found := inf.CheckMutations()
				require.Len(t, found, 2, "%v", found)
				keys := []string{found[0].Key, found[1].Key}
				assert.ElementsMatch(t, []string{"ns/listed", "ns/bad-watched"}, keys)
				for _, err := range found {
					assert.Equal(t, "configmaps", err.Informer)
					assert.Contains(t, err.Diff, `-  "k": "v"`)
					assert.Contains(t, err.Diff, `+  "k": "changed by a handler"`)
					assert.True(t, errors.Is(err, informer.ErrCacheMutated))
					assert.Contains(t, err.Error(), "informer configmaps: an object in the informer's cache was mutated: "+err.Key)
				}
				assert.Equal(t, found, reported, "OnMutation got each one")
				assert.Equal(t, 2, strings.Count(logs.String(), "level=ERROR msg=\"cache mutation detected\""))
				assert.Empty(t, inf.CheckMutations(), "each mutation is reported once")
			})
		})
	}
}

// Without a call to CheckMutations, the detector compares every Period on a
// goroutine of its own.
func TestTheMutationDetectorComparesEveryPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		src.Create(cm("a", "k", "v"))
		var mu sync.Mutex
		var reported []*informer.MutationError
		inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](src, informer.Options[*corev1.ConfigMap]{
			Logger: logBufferLogger(),
			MutationDetector: &informer.MutationDetector{OnMutation: func(err *informer.MutationError) {
				mu.Lock()
				defer mu.Unlock()
				reported = append(reported, err)
			}},
		})
		running(t, inf)
		time.Sleep(1500 * time.Millisecond) // between two comparisons (one every second)
		synctest.Wait()
		obj, _, _ := inf.Indexer().GetByKey("ns/a")
		obj.Labels = map[string]string{"changed": "through the Indexer"}
		// A mutation races with every reader, the detector included. For the race
		// detector, the test orders its own write before the next comparison: the
		// informer caches b after it, and the comparison takes the lock that
		// caching b took.
		src.Create(cm("b", "k", "v"))
		synctest.Wait()
		mu.Lock()
		assert.Empty(t, reported, "no comparison yet")
		mu.Unlock()
		time.Sleep(time.Second)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, reported, 1)
		assert.Equal(t, "ns/a", reported[0].Key)
		assert.Equal(t, "*v1.ConfigMap", reported[0].Informer, "an unnamed informer is named by its type")
		assert.Contains(t, reported[0].Diff, `"changed": "through the Indexer"`)
	})
}

// An object is watched for Retain, then for one more Retain in the previous
// generation, then forgotten: client-go's two-minute rotation.
func TestTheMutationDetectorForgetsAnObjectAfterTwoRetainPeriods(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		src.Create(cm("old", "k", "v"))
		inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](src, informer.Options[*corev1.ConfigMap]{
			Logger:           logBufferLogger(),
			MutationDetector: &informer.MutationDetector{Period: time.Hour, Retain: 2 * time.Minute},
		})
		running(t, inf)
		synctest.Wait()
		assert.Empty(t, inf.CheckMutations()) // t=0: "old" joins the current generation

		time.Sleep(3 * time.Minute)
		src.Create(cm("recent", "k", "v"))
		synctest.Wait()
		assert.Empty(t, inf.CheckMutations()) // t=3m: rotation; "old" is in the previous one
		mutate := func(key string) {
			obj, _, _ := inf.Indexer().GetByKey(key)
			obj.Data["k"] = "changed"
		}
		mutate("ns/recent")
		found := inf.CheckMutations()
		require.Len(t, found, 1)
		assert.Equal(t, "ns/recent", found[0].Key)

		time.Sleep(3 * time.Minute)
		mutate("ns/old")
		assert.Empty(t, inf.CheckMutations(), "t=6m: a second rotation dropped old's copy")
	})
}

func TestCheckMutationsIsNilWithoutTheDetector(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fakeapi.New[*corev1.ConfigMap]()
		src.Create(cm("a", "k", "v"))
		inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](src, informer.Options[*corev1.ConfigMap]{})
		running(t, inf)
		synctest.Wait()
		obj, _, _ := inf.Indexer().GetByKey("ns/a")
		obj.Data["k"] = "changed"
		assert.Nil(t, inf.CheckMutations())
	})
}

func logBufferLogger() *slog.Logger { return new(logBuffer).logger() }

// Objects cached by a relist into a non-empty cache are watched too.
func TestTheMutationDetectorWatchesWhatARelistCached(t *testing.T) {
	for _, p := range pipelines {
		t.Run(p.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				a := src.Create(cm("a", "k", "v"))
				inf := newInformer(p, src, informer.Options[*corev1.ConfigMap]{
					Logger: logBufferLogger(), MutationDetector: &informer.MutationDetector{Period: time.Hour},
				})
				running(t, inf)
				synctest.Wait()
				changeWhileDown(src, func() {
					changed := a.DeepCopy()
					changed.Data["k"] = "v2"
					src.Update(changed)
				})
				obj, _, _ := inf.Indexer().GetByKey("ns/a")
				require.Equal(t, "v2", obj.Data["k"], "the relist cached the new version")
				obj.Data["k"] = "changed"
				found := inf.CheckMutations()
				require.Len(t, found, 1)
				assert.Contains(t, found[0].Diff, `-  "k": "v2"`)
			})
		})
	}
}

// A resync hands every cached object to the handlers again, and the detector watches
// each one afresh, on both pipelines: a handler that changes an object it got from a
// resync is reported, even when the copy taken when it was cached has been dropped.
func TestTheMutationDetectorWatchesWhatAResyncHandsOut(t *testing.T) {
	for _, p := range pipelines {
		t.Run(p.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				src.Create(cm("a", "k", "v"))
				inf := newInformer(p, src, informer.Options[*corev1.ConfigMap]{
					Logger: logBufferLogger(), ResyncPeriod: 5 * time.Minute,
					// A period longer than the test: the comparisons are CheckMutations'.
					MutationDetector: &informer.MutationDetector{Period: time.Hour, Retain: time.Minute},
				})
				var mu sync.Mutex
				resyncs, mutate := 0, false // guarded by mu
				_, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
					UpdateFunc: func(old, obj *corev1.ConfigMap) {
						mu.Lock()
						defer mu.Unlock()
						resyncs++
						if mutate {
							obj.Data["k"] = "changed by a handler during a resync" // the bug the detector is for
						}
					},
				})
				require.NoError(t, err)
				running(t, inf)
				synctest.Wait()
				assert.Empty(t, inf.CheckMutations()) // t=0: a's copy joins the current generation
				time.Sleep(time.Minute)
				assert.Empty(t, inf.CheckMutations()) // t=1m: rotated into the previous one
				time.Sleep(time.Minute)
				assert.Empty(t, inf.CheckMutations()) // t=2m: a's copy is dropped
				// The handler changes a only from now on, under mu: for the race
				// detector, the comparisons above happen before its change.
				mu.Lock()
				mutate = true
				mu.Unlock()

				time.Sleep(3 * time.Minute) // t=5m: the resync
				synctest.Wait()
				mu.Lock()
				require.Equal(t, 1, resyncs, "one resync update")
				mu.Unlock()
				found := inf.CheckMutations()
				require.Len(t, found, 1, "the resync's copy of a sees the handler's change")
				assert.Equal(t, "ns/a", found[0].Key)
				assert.Contains(t, found[0].Diff, `+  "k": "changed by a handler during a resync"`)
			})
		})
	}
}

// The detector's log line names the informer once, whether the informer was named or
// is known by its Go type.
func TestAMutationIsLoggedWithTheInformerNamedOnce(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"configmaps", "informer=configmaps"},
		{"", "informer=*v1.ConfigMap"},
	} {
		t.Run("informer named "+c.want, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				src.Create(cm("a", "k", "v"))
				var logs logBuffer
				inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](src, informer.Options[*corev1.ConfigMap]{
					Name: c.name, Logger: logs.logger(),
					MutationDetector: &informer.MutationDetector{Period: time.Hour},
				})
				running(t, inf)
				synctest.Wait()
				obj, _, _ := inf.Indexer().GetByKey("ns/a")
				obj.Data["k"] = "changed"
				require.Len(t, inf.CheckMutations(), 1)
				var line string
				for l := range strings.Lines(logs.String()) {
					if strings.Contains(l, `msg="cache mutation detected"`) {
						line = l
					}
				}
				require.NotEmpty(t, line, logs.String())
				assert.Equal(t, 1, strings.Count(line, " informer="), line)
				assert.Contains(t, line, " "+c.want+" ")
			})
		})
	}
}
