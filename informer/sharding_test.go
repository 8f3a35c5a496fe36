package informer_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
	"github.com/kubeinternals/informers/internal/testrig/testmetrics/informermetrics"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/shard"
	"github.com/kubeinternals/informers/trace"
)

// shardCM is a ConfigMap with a uid of its own, so that uid shards place it: a
// uuid made from a hash of its name, as random-looking as the apiserver's.
//
// Why not "uid-"+name: FNV-1a has no final mixing, so uids that differ only in their
// last characters hash close together, all into one half of the space.
func shardCM(name string) *corev1.ConfigMap {
	c := cm(name)
	sum := sha256.Sum256([]byte(name))
	c.UID = types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16]))
	return c
}

// Two informers on the two halves of the uid space, over one server, with the
// apiserver's feature gate on and off, on both pipelines: the caches are disjoint,
// their union is the server's state, each object sits where Contains says — after
// the initial list, after creates, updates and deletes while watching, and after a
// relist forced by a 410 and by an outage — and every event reaches exactly one
// informer's handler.
func TestTwoShardedInformersSplitAResourceExactly(t *testing.T) {
	for _, p := range pipelines {
		for _, gate := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/gate=%v", p.name, gate), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					src := fakeapi.New[*corev1.ConfigMap]()
					src.ShardLikeTheAPIServer(gate)
					for i := range 40 {
						src.Create(shardCM(fmt.Sprintf("cm-%02d", i)))
					}
					halves, err := shard.Split(shard.UID, 2)
					require.NoError(t, err)
					var infs []*informer.SharedIndexInformer[*corev1.ConfigMap]
					var recs []*recorder
					for _, h := range halves {
						inf := newInformer(p, src, informer.Options[*corev1.ConfigMap]{Shard: h, Logger: slog.New(slog.DiscardHandler)})
						rec := &recorder{}
						_, err := inf.AddEventHandler(rec)
						require.NoError(t, err)
						running(t, inf)
						infs, recs = append(infs, inf), append(recs, rec)
					}
					synctest.Wait()

					checks := 0
					check := func(when string) {
						t.Helper()
						checks++
						want := slices.Sorted(slices.Values(serverKeys(t, src)))
						var union []string
						for i, inf := range infs {
							for _, o := range inf.Indexer().List() {
								assert.True(t, halves[i].Contains(string(o.UID)), "%s: %s in shard %d", when, o.Name, i)
								union = append(union, "ns/"+o.Name)
							}
						}
						slices.Sort(union)
						assert.Equal(t, want, union, "%s: the union of the shards is the server's state, each object once", when)
					}
					check("after the initial list")
					for _, inf := range infs {
						assert.NotEmpty(t, inf.Indexer().ListKeys(), "40 uids fill both halves")
					}

					for i := range 10 {
						src.Create(shardCM(fmt.Sprintf("new-%02d", i)))
						up := shardCM(fmt.Sprintf("cm-%02d", i))
						up.Data = map[string]string{"k": "v"}
						src.Update(up)
						src.Delete(shardCM(fmt.Sprintf("cm-%02d", 20+i)))
					}
					synctest.Wait()
					check("after changes while watching")
					seen := map[string]int{}
					for _, rec := range recs {
						for _, e := range rec.get() {
							if !e.isInInitialList {
								seen[e.kind+" "+e.name]++
							}
						}
					}
					assert.Len(t, seen, 30, "every change reached a handler")
					for ev, n := range seen {
						assert.Equal(t, 1, n, "%s reached %d informers", ev, n)
					}

					src.Compact() // 410: every watch ends, and old RVs are gone
					src.Create(shardCM("after-410"))
					time.Sleep(time.Minute)
					synctest.Wait()
					check("after a 410")
					changeWhileDown(src, func() {
						src.Create(shardCM("during-outage"))
						src.DeleteSilently(shardCM("cm-05"))
					})
					synctest.Wait()
					check("after a relist")

					for i, inf := range infs {
						st, ok := inf.Sharding()
						require.True(t, ok)
						assert.Equal(t, halves[i].String(), st.Shard.String())
						if gate {
							assert.Equal(t, listwatch.FilteringServer, st.Filtering)
							assert.Zero(t, st.Dropped, "the server sent only the shard")
						} else {
							assert.Equal(t, listwatch.FilteringClient, st.Filtering)
							assert.NotZero(t, st.Dropped, "the server sent everything")
						}
					}
					unsharded := 0
					for _, opts := range src.ListCalls() {
						if opts.ShardSelector == "" {
							unsharded++
						}
					}
					assert.Equal(t, checks, unsharded, "every LIST but the test's own asks for a shard")
					for _, opts := range src.WatchCalls() {
						assert.NotEmpty(t, opts.ShardSelector, "every WATCH asks for a shard")
					}
				})
			})
		}
	}
}

func serverKeys(t *testing.T, src *fakeapi.Server[*corev1.ConfigMap]) []string {
	t.Helper()
	res, err := src.List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	keys := make([]string, len(res.Items))
	for i, o := range res.Items {
		keys[i] = o.Namespace + "/" + o.Name
	}
	return keys
}

// With the gate off, a sharded informer says so in its status, its metrics and its
// log; with RequireServerSharding it does not sync, and WaitForCacheSync returns at
// once with the reason.
func TestAShardedInformerSaysWhenTheServerDoesNotShard(t *testing.T) {
	for _, p := range pipelines {
		t.Run(p.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := fakeapi.New[*corev1.ConfigMap]()
				for i := range 20 {
					src.Create(shardCM(fmt.Sprintf("cm-%02d", i)))
				}
				halves, err := shard.Split(shard.UID, 2)
				require.NoError(t, err)
				metrics := &informermetrics.Recorder{}
				logs := &logBuffer{}
				var rec trace.Recorder
				inf := newInformer(p, src, informer.Options[*corev1.ConfigMap]{Name: "cms", Shard: halves[1], MetricsProvider: metrics, Logger: logs.logger(),
					Tracer: trace.New(rec.Record)})
				running(t, inf)
				synctest.Wait()
				require.True(t, inf.HasSynced())
				st, _ := inf.Sharding()
				filtering := trace.Filter(rec.Events(), func(e trace.Event) bool { return e.Kind == trace.ShardFiltering })
				if assert.Len(t, filtering, 1, "the informer's tracer hears who filters") {
					assert.Equal(t, "cms", filtering[0].Source, "under the informer's name")
					assert.Equal(t, "client", filtering[0].Type)
				}
				assert.Len(t, trace.Filter(rec.Events(), func(e trace.Event) bool { return e.Kind == trace.ShardDropped && e.Source == "cms" }),
					int(st.Dropped), "one event per object dropped")
				assert.Equal(t, listwatch.FilteringClient, st.Filtering)
				assert.Contains(t, st.String(), "client-side filtering: the apiserver did not apply ShardSelector — enable feature gate ShardedListAndWatch")
				dropped := metrics.Values("shard_dropped{cms}")
				assert.Len(t, dropped, 20-len(inf.Indexer().ListKeys()), "one Inc per object outside the shard")
				assert.Equal(t, []float64{1}, metrics.Values("shard_client_filtering{cms}"))
				assert.Equal(t, 1, strings.Count(logs.String(), "client-side filtering"), "%s", logs)

				strict := newInformer(p, src, informer.Options[*corev1.ConfigMap]{Shard: halves[1], RequireServerSharding: true, Logger: slog.New(slog.DiscardHandler)})
				running(t, strict)
				ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
				defer cancel()
				began := time.Now()
				err = informer.WaitForCacheSync(ctx, strict)
				require.ErrorIs(t, err, listwatch.ErrServerNotSharding)
				assert.Less(t, time.Since(began), time.Minute, "a hopeless error ends the wait")
				assert.False(t, strict.HasSynced())
				assert.Empty(t, strict.Indexer().ListKeys(), "nothing reached the cache")

				src.ShardLikeTheAPIServer(true)
				time.Sleep(5 * time.Minute) // past the backoff: the next list is sharded
				synctest.Wait()
				assert.True(t, strict.HasSynced(), "the apiserver shards now")
			})
		})
	}
}
