package informer_test

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
	"github.com/kubeinternals/informers/trace"
)

// panicky is a handler whose every call panics.
type panicky struct{}

func (panicky) OnAdd(*corev1.ConfigMap, bool)   { panic("add went wrong") }
func (panicky) OnUpdate(_, _ *corev1.ConfigMap) { panic("update went wrong") }
func (panicky) OnDelete(informer.DeletedObject[*corev1.ConfigMap]) {
	panic("delete went wrong")
}

// sentencesOf returns, for the events of stage from source (any source if ""), their
// sentences without resource versions (the fake API server picks those).
func sentencesOf(events []trace.Event, stage trace.Stage, source string) []string {
	var out []string
	for _, e := range events {
		if e.Stage != stage || (source != "" && e.Source != source) {
			continue
		}
		e.ResourceVersion = ""
		out = append(out, e.String())
	}
	return out
}

func TestTheInformerTracesEachIndexerWriteFanOutAndHandlerCall(t *testing.T) {
	for _, q := range pipelines {
		t.Run(q.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var rec trace.Recorder
				src := fakeapi.New[*corev1.ConfigMap]()
				inf := newInformer(q, src, informer.Options[*corev1.ConfigMap]{
					Name:         "configmaps",
					ResyncPeriod: time.Second,
					Indexers: indexer.Indexers[*corev1.ConfigMap]{"color": func(o *corev1.ConfigMap) ([]string, error) {
						return []string{o.Data["color"]}, nil
					}},
					Tracer: trace.New(rec.Record),
				})
				_, err := inf.AddEventHandlerWithOptions(&recorder{}, informer.HandlerOptions{Name: "recorder"})
				require.NoError(t, err)
				noResync := time.Duration(0)
				_, err = inf.AddEventHandlerWithOptions(panicky{}, informer.HandlerOptions{ResyncPeriod: &noResync})
				require.NoError(t, err)
				running(t, inf)
				synctest.Wait()

				a := src.Create(cm("a", "color", "red"))
				synctest.Wait()
				a = a.DeepCopy()
				a.Data["color"] = "blue"
				src.Update(a)
				synctest.Wait()
				src.Delete(a)
				synctest.Wait()
				src.Create(cm("b", "color", "green"))
				synctest.Wait()
				time.Sleep(1500 * time.Millisecond) // one resync, due for "recorder" only
				synctest.Wait()

				events := rec.Events()
				// A DeltaFIFO resync is a Sync delta per object, written to the indexer
				// like any update; a RealFIFO resync is one SyncAll, which only
				// re-delivers what the indexer holds.
				resyncWrite := []string{`applied update ns/b to the indexer (no index value changed)`}
				if q.queue == informer.RealFIFOQueue {
					resyncWrite = nil
				}
				assert.Equal(t, slices.Concat([]string{
					`applied add ns/a to the indexer (index "color": [] → [red])`,
					`fanned out add ns/a to 2 handlers`,
					`applied update ns/a to the indexer (index "color": [red] → [blue])`,
					`fanned out update ns/a to 2 handlers`,
					`applied delete ns/a to the indexer (index "color": [blue] → [])`,
					`fanned out delete ns/a to 2 handlers`,
					`applied add ns/b to the indexer (index "color": [] → [green])`,
					`fanned out add ns/b to 2 handlers`,
				}, resyncWrite, []string{
					`fanned out update ns/b to 1 handler (1 not due for resync)`,
				}), sentencesOf(events, trace.Informer, "configmaps"))
				assert.Equal(t, []string{
					`buffered add ns/a (backlog 1)`, `handler called add ns/a`, `handler returned add ns/a after 0.000ms`,
					`buffered update ns/a (backlog 1)`, `handler called update ns/a`, `handler returned update ns/a after 0.000ms`,
					`buffered delete ns/a (backlog 1)`, `handler called delete ns/a`, `handler returned delete ns/a after 0.000ms`,
					`buffered add ns/b (backlog 1)`, `handler called add ns/b`, `handler returned add ns/b after 0.000ms`,
					`buffered update ns/b (backlog 1)`, `handler called update ns/b`, `handler returned update ns/b after 0.000ms`,
				}, sentencesOf(events, trace.Listener, "recorder"))
				assert.Equal(t, []string{
					`buffered add ns/a (backlog 1)`, `handler called add ns/a`, `panic recovered in add ns/a: add went wrong`,
					`buffered update ns/a (backlog 1)`, `handler called update ns/a`, `panic recovered in update ns/a: update went wrong`,
					`buffered delete ns/a (backlog 1)`, `handler called delete ns/a`, `panic recovered in delete ns/a: delete went wrong`,
					`buffered add ns/b (backlog 1)`, `handler called add ns/b`, `panic recovered in add ns/b: add went wrong`,
				}, sentencesOf(events, trace.Listener, "configmaps handler 2"), "an unnamed handler is named for its informer and its rank")
				for _, e := range events {
					if e.Stage == trace.Listener {
						assert.Equal(t, "configmaps", e.Informer, "a handler's event names the informer it is registered on: %s", e)
					} else {
						assert.Empty(t, e.Informer, "only a Listener event names an informer: %s", e)
					}
				}
			})
		})
	}
}

// A DELETED watch event for an object the cache never held (a missed ADDED, as the
// lab's delete-unknown-key scenario makes one): the classic DeltaFIFO drops it; a
// RealFIFO passes it on, and the informer's trace says the delete removed nothing
// instead of naming index values the cache never had.
func TestADeleteOfAnObjectTheCacheNeverHeldIsTracedAsRemovingNothing(t *testing.T) {
	for _, q := range pipelines {
		t.Run(q.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var rec trace.Recorder
				src := fakeapi.New[*corev1.ConfigMap]()
				inf := newInformer(q, src, informer.Options[*corev1.ConfigMap]{
					Name: "configmaps",
					Indexers: indexer.Indexers[*corev1.ConfigMap]{"color": func(o *corev1.ConfigMap) ([]string, error) {
						return []string{o.Data["color"]}, nil
					}},
					Tracer: trace.New(rec.Record),
				})
				_, err := inf.AddEventHandlerWithOptions(&recorder{}, informer.HandlerOptions{Name: "recorder"})
				require.NoError(t, err)
				running(t, inf)
				synctest.Wait()

				src.Delete(cm("ghost", "color", "gray")) // never created: a DELETED for an unknown key
				synctest.Wait()
				want := []string{
					`applied delete ns/ghost to the indexer (the cache did not hold it: nothing removed)`,
					`fanned out delete ns/ghost to 1 handler`,
				}
				if q.queue != informer.RealFIFOQueue {
					want = nil // DeltaFIFO: neither queued nor known, dropped
				}
				assert.Equal(t, want, sentencesOf(rec.Events(), trace.Informer, "configmaps"))
			})
		})
	}
}

// The Applied event's detail names every index whose values a write changed, in
// name order, with each value list sorted and printed as fmt prints a []string; an
// index whose values did not change is left out; and an index added to the cache
// after the informer started is in the next write's detail (the trace caches the
// index list, and must see it grow).
func TestAppliedNamesEachChangedIndexSortedAndSeesAnIndexAddedLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec trace.Recorder
		src := fakeapi.New[*corev1.ConfigMap]()
		inf := newInformer(pipelines[0], src, informer.Options[*corev1.ConfigMap]{
			Name: "configmaps",
			Indexers: indexer.Indexers[*corev1.ConfigMap]{
				// Values out of order, as a user's function may return them.
				"tags": func(o *corev1.ConfigMap) ([]string, error) {
					if o.Data["tags"] == "" {
						return nil, nil
					}
					return strings.Split(o.Data["tags"], ","), nil
				},
				"b-same": func(*corev1.ConfigMap) ([]string, error) { return []string{"always"}, nil },
			},
			Tracer: trace.New(rec.Record),
		})
		running(t, inf)
		synctest.Wait()

		a := src.Create(cm("a", "tags", "z,b,m", "color", "red"))
		synctest.Wait()
		a = a.DeepCopy()
		a.Data["tags"] = "b"
		a = src.Update(a)
		synctest.Wait()
		require.NoError(t, inf.Indexer().AddIndexers(indexer.Indexers[*corev1.ConfigMap]{
			"added-later": func(o *corev1.ConfigMap) ([]string, error) { return []string{o.Data["color"]}, nil },
		}))
		a = a.DeepCopy()
		a.Data["color"] = "blue"
		a = src.Update(a)
		synctest.Wait()
		src.Delete(a)
		synctest.Wait()

		var applied []string
		for _, s := range sentencesOf(rec.Events(), trace.Informer, "configmaps") {
			if strings.HasPrefix(s, "applied") {
				applied = append(applied, s)
			}
		}
		assert.Equal(t, []string{
			`applied add ns/a to the indexer (index "b-same": [] → [always]; index "tags": [] → [b m z])`,
			`applied update ns/a to the indexer (index "tags": [b m z] → [b])`,
			`applied update ns/a to the indexer (index "added-later": [red] → [blue])`,
			`applied delete ns/a to the indexer (index "added-later": [blue] → []; index "b-same": [always] → []; index "tags": [b] → [])`,
		}, applied)
	})
}
