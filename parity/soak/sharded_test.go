package soak

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/shard"
)

// transcript is what one informer's handler was told, in order: "add key@rv" (with
// "initial" for the objects of the first list), "update key rv→rv", "delete key@rv".
type transcript struct {
	mu    sync.Mutex
	lines []string
}

func (tr *transcript) add(format string, args ...any) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.lines = append(tr.lines, fmt.Sprintf(format, args...))
}

// initialKeys is the keys of the initial adds, in the order the handler got them.
func (tr *transcript) initialKeys() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var keys []string
	for _, l := range tr.lines {
		if strings.HasSuffix(l, " initial=true") {
			key, _, _ := strings.Cut(strings.TrimPrefix(l, "add "), "@")
			keys = append(keys, key)
		}
	}
	return keys
}

// get returns the transcript with its initial adds sorted: client-go 1.37 hands the
// objects of a watch-list to its queue from a map (its temporary store's List), in
// no particular order, ours in the order the stream sent them (checked on its own,
// by initialKeys).
func (tr *transcript) get() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var initial, later []string
	for _, l := range tr.lines {
		if strings.HasSuffix(l, " initial=true") {
			initial = append(initial, l)
		} else {
			later = append(later, l)
		}
	}
	slices.Sort(initial)
	return append(initial, later...)
}

// Ours with a shard and client-go 1.37 with WithTweakListOptions setting the same
// ShardSelector, side by side on a real kube-apiserver with the feature gate on, for
// N = 3 over uid and over namespace: while 300 creates, updates and deletes run, each
// shard's informers are told the same story — the same initial objects, then the same
// events in the same order — and end with the same cache, which is the LIST's objects
// in that shard (the initial objects compared as a set: see transcript.get). No
// faults: the soak (TestSoak with SOAK_SHARDS) compares the two under
// faults, against the LIST.
func TestShardsLikeClientGo(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	const namespaces, objects, writes = 12, 240, 300
	ns := func(i int) string { return fmt.Sprintf("shards-%x", rand.New(rand.NewPCG(uint64(i), 1)).Uint32()) }
	for i := range namespaces {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns(i)}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for i := range objects {
		_, err := cs.CoreV1().ConfigMaps(ns(i%namespaces)).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i)}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	require.NoError(t, err)

	for _, key := range []shard.Key{shard.UID, shard.Namespace} {
		t.Run(string(key), func(t *testing.T) {
			shards, err := shard.Split(key, 3)
			require.NoError(t, err)
			runCtx, stop := context.WithCancel(ctx)
			var stops []func()
			defer func() {
				stop()
				for _, s := range stops {
					s()
				}
			}()
			ours := make([]*transcript, len(shards))
			theirs := make([]*transcript, len(shards))
			var oursCache, theirsCache []func() map[string]string
			var synced []func() bool
			for i, s := range shards {
				ours[i], theirs[i] = &transcript{}, &transcript{}

				f := informer.NewFactory(env.Config, informer.FactoryOptions{Scheme: scheme, Shard: s, RequireServerSharding: true, Logger: slog.New(slog.DiscardHandler)})
				inf, err := informer.For[*corev1.ConfigMap](f, informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("configmaps")})
				require.NoError(t, err)
				tr := ours[i]
				_, err = inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
					AddFunc: func(cm *corev1.ConfigMap, initial bool) {
						tr.add("add %s@%s initial=%v", keyOf(cm), cm.ResourceVersion, initial)
					},
					UpdateFunc: func(old, cm *corev1.ConfigMap) {
						tr.add("update %s %s→%s", keyOf(cm), old.ResourceVersion, cm.ResourceVersion)
					},
					DeleteFunc: func(d informer.DeletedObject[*corev1.ConfigMap]) {
						tr.add("delete %s@%s", d.GetKey(), d.OptionalObj.ResourceVersion)
					},
				})
				require.NoError(t, err)
				f.Start(runCtx)
				stops = append(stops, f.Shutdown)
				synced = append(synced, inf.HasSynced)
				oursCache = append(oursCache, func() map[string]string {
					out := map[string]string{}
					for _, cm := range inf.Indexer().List() {
						out[keyOf(cm)] = cm.ResourceVersion
					}
					return out
				})

				cf := clientgoinformers.NewSharedInformerFactoryWithOptions(cs, 0,
					clientgoinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.ShardSelector = s.String() }))
				cinf := cf.Core().V1().ConfigMaps().Informer()
				ctr := theirs[i]
				_, err = cinf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
					AddFunc: func(obj any, initial bool) {
						cm := obj.(*corev1.ConfigMap)
						ctr.add("add %s@%s initial=%v", keyOf(cm), cm.ResourceVersion, initial)
					},
					UpdateFunc: func(old, obj any) {
						ctr.add("update %s %s→%s", keyOf(obj.(*corev1.ConfigMap)), old.(*corev1.ConfigMap).ResourceVersion, obj.(*corev1.ConfigMap).ResourceVersion)
					},
					DeleteFunc: func(obj any) {
						cm, ok := obj.(*corev1.ConfigMap)
						if !ok {
							ctr.add("delete of a %T", obj)
							return
						}
						ctr.add("delete %s@%s", keyOf(cm), cm.ResourceVersion)
					},
				})
				require.NoError(t, err)
				cf.Start(runCtx.Done())
				stops = append(stops, cf.Shutdown)
				synced = append(synced, cinf.HasSynced)
				theirsCache = append(theirsCache, func() map[string]string {
					out := map[string]string{}
					for _, obj := range cinf.GetStore().List() {
						cm := obj.(*corev1.ConfigMap)
						out[keyOf(cm)] = cm.ResourceVersion
					}
					return out
				})
			}
			require.Eventually(t, func() bool {
				for _, s := range synced {
					if !s() {
						return false
					}
				}
				return true
			}, time.Minute, 20*time.Millisecond)

			r := rand.New(rand.NewPCG(42, uint64(len(key))))
			for i := range writes {
				target := fmt.Sprintf("cm-%03d", r.IntN(objects+objects/4))
				space := ns(r.IntN(namespaces))
				cms := cs.CoreV1().ConfigMaps(space)
				cm, err := cms.Get(ctx, target, metav1.GetOptions{})
				switch {
				case err != nil:
					_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: target}}, metav1.CreateOptions{})
				case r.IntN(4) == 0:
					err = cms.Delete(ctx, target, metav1.DeleteOptions{})
				default:
					cm.Data = map[string]string{"write": fmt.Sprint(i)}
					_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
				}
				require.NoError(t, err)
			}

			list, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			for i, s := range shards {
				want := map[string]string{}
				for _, cm := range list.Items {
					if s.ContainsObject(&cm) {
						want[keyOf(&cm)] = cm.ResourceVersion
					}
				}
				require.Eventually(t, func() bool {
					return differ(oursCache[i](), want) == "" && differ(theirsCache[i](), want) == ""
				}, time.Minute, 20*time.Millisecond, "shard %d: ours %s; client-go's %s", i,
					differ(oursCache[i](), want), differ(theirsCache[i](), want))
				// A handler may trail its cache: wait for the two stories to agree, then
				// show the difference if they never did.
				assert.Eventually(t, func() bool { return slices.Equal(ours[i].get(), theirs[i].get()) }, 30*time.Second, 20*time.Millisecond)
				assert.Equal(t, theirs[i].get(), ours[i].get(), "shard %d: the same story, in the same order", i)
				// That comparison cannot see the order of the initial adds (client-go's is
				// a map's). Ours is the stream's: the watch cache sends a watch-list's
				// objects in key order, and so our handler gets them.
				keys := ours[i].initialKeys()
				assert.NotEmpty(t, keys, "shard %d", i)
				assert.True(t, slices.IsSorted(keys), "shard %d: our initial adds in the stream's (key) order: %q", i, keys)
				assert.NotEmpty(t, want, "shard %d holds objects", i)
			}
		})
	}
}
