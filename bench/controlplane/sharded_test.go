package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/shard"
)

// The sharded rows sync one shard of the 100,000 Pods: shard 0 of shard.Split(UID, N),
// the first 1/N of the uid hash space. uids are random, so each shard holds about
// 100,000/N Pods (the row checks the exact count, from a LIST it makes first).

// BenchmarkShardedFactorySync100kPods: a replica that owns one shard of N syncs it
// from a kube-apiserver that shards (feature gate ShardedListAndWatch on, as the
// bench's control plane starts it): our factory with FactoryOptions.Shard against
// client-go's NewSharedInformerFactory with a WithTweakListOptions that sets the same
// ListOptions.ShardSelector, client-go 1.37's only way to ask for a shard. The
// apiserver filters, so both receive and decode only the shard's Pods: MB-wire,
// client CPU, peak heap and the cache (MB-live-after) fall to about 1/N of the
// unsharded sync's. shards=1 is that unsharded sync, measured in the same run: no
// shard, no selector, no probe — BenchmarkDefaultsFactorySync100kPods again, so
// that the sharded rows' ratios to it come from one machine and one run.
//
// Fair: defaults against defaults but for the one selector, the same shard, the same
// rest.Config, a watch-list each (gzipped; the row fails if it arrives plain). Ours
// does what client-go's does not, and pays for it in every column: a LIST with
// limit=1 before the watch-list (to learn that the apiserver applies the selector),
// a check of every object against the shard, and a goroutine between the watch and
// the reflector that drops objects outside it. The row fails unless our informer
// reports that the apiserver filtered and dropped nothing. Wall time is noisy (the
// apiserver and etcd share the 2 cores); the client's CPU and heap decide.
func BenchmarkShardedFactorySync100kPods(b *testing.B) {
	benchmarkShardedPods(b, false)
}

// BenchmarkShardedFactorySync100kPodsClientFilter: as
// BenchmarkShardedFactorySync100kPods against a kube-apiserver that does not shard
// (the gate off, the default of Kubernetes 1.37): the apiserver ignores the selector
// and sends every Pod. Ours notices (the LIST with limit=1 comes back without
// metadata.shardInfo), decodes all 100,000 Pods and keeps only the shard's: the cache
// is the shard's, the wire, the decoding and the client CPU the whole resource's.
// client-go with the tweak has no such check: its cache holds all 100,000.
//
// The gate off is played by the client's transport, which takes shardSelector out of
// every request's query on both sides: with the gate off kube-apiserver drops the
// field before it reads it, so it answers exactly as to a request without one (no
// shardInfo, every object; TestShardsAgreeWithTheAPIServer checks that on the real
// gate-off server). One control plane serves every row, as bench/README.md says.
//
// Fair: as BenchmarkShardedFactorySync100kPods, both sides sending the same
// selector into the same transport. It is not the same work: client-go caches every
// Pod (it cannot know the apiserver ignored the selector), ours a shard; the row
// shows what that correctness costs ours and what it saves. The row fails unless our
// informer reports client-side filtering and dropped exactly the Pods outside the
// shard. Wall time is noisy (the apiserver and etcd share the 2 cores); the client's
// CPU and heap decide.
func BenchmarkShardedFactorySync100kPodsClientFilter(b *testing.B) {
	benchmarkShardedPods(b, true)
}

// benchmarkShardedPods runs the sharded sync of shard 0 of Split(UID, N) for N = 2
// and 4 as sub-benchmarks shards=N; gateOff strips the selector from every request.
// Without gateOff it first runs shards=1: the same sync without a shard, the
// baseline the sharded rows are read against in the same run.
func benchmarkShardedPods(b *testing.B, gateOff bool) {
	cfg := benchConfig(b)
	pods100k.ensure(b, cfg)
	gvr := corev1.SchemeGroupVersion.WithResource("pods")
	if !gateOff {
		b.Run("shards=1", func(b *testing.B) {
			benchmarkDefaults[*corev1.Pod](b, cfg, pods100k, gvr, func(f clientgoinformers.SharedInformerFactory) cache.SharedIndexInformer {
				return f.Core().V1().Pods().Informer()
			})
		})
	}
	for _, n := range []int{2, 4} {
		b.Run(fmt.Sprintf("shards=%d", n), func(b *testing.B) {
			shards, err := shard.Split(shard.UID, n)
			if err != nil {
				b.Fatal(err)
			}
			s := shards[0]
			inShard := countInShard(b, cfg, s)
			want := expected[*corev1.Pod]{ours: inShard, clientGo: inShard}
			filtering := listwatch.FilteringServer
			side := cfg
			if gateOff {
				want.clientGo = pods100k.n
				filtering = listwatch.FilteringClient
				side = withoutShardSelector(cfg)
			}
			want.check = func(b *testing.B, inf *informer.SharedIndexInformer[*corev1.Pod]) {
				st, _ := inf.Sharding()
				if st.Filtering != filtering || int(st.Dropped) != want.clientGo-inShard {
					b.Fatalf("our informer reports %v; want %s, %d dropped", st, filtering, want.clientGo-inShard)
				}
			}
			benchmarkFactoryExpecting(b, side, pods100k, gvr, informer.FactoryOptions{Shard: s},
				func(b *testing.B, cfg *rest.Config) func() clientGoFactory {
					cs, err := kubernetes.NewForConfig(cfg)
					if err != nil {
						b.Fatal(err)
					}
					selector := s.String()
					return func() clientGoFactory {
						f := clientgoinformers.NewSharedInformerFactoryWithOptions(cs, 0,
							clientgoinformers.WithNamespace(pods100k.namespace),
							clientgoinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.ShardSelector = selector }))
						inf := f.Core().V1().Pods().Informer()
						return clientGoFactory{start: f.Start, shutdown: f.Shutdown, cache: inf.GetStore(),
							waitForCacheSync: func(stop <-chan struct{}) bool { return all(f.WaitForCacheSync(stop)) }}
					}
				}, want)
		})
	}
}

// countInShard lists the Pods' metadata once, unsharded, and counts those s
// contains: what a shard's cache must hold.
func countInShard(b *testing.B, cfg *rest.Config, s shard.Shard) int {
	b.Helper()
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	list, err := mc.Resource(corev1.SchemeGroupVersion.WithResource("pods")).Namespace(pods100k.namespace).
		List(context.Background(), metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if len(list.Items) != pods100k.n {
		b.Fatalf("listed %d Pods, want %d", len(list.Items), pods100k.n)
	}
	n := 0
	for i := range list.Items {
		if s.ContainsObject(&list.Items[i]) {
			n++
		}
	}
	return n
}

// withoutShardSelector is cfg with a transport that takes shardSelector out of every
// request's query: what a kube-apiserver with ShardedListAndWatch off does with it.
func withoutShardSelector(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return dropShardSelector{rt} })
	return c
}

type dropShardSelector struct{ next http.RoundTripper }

func (d dropShardSelector) RoundTrip(req *http.Request) (*http.Response, error) {
	if q := req.URL.Query(); q.Has("shardSelector") {
		q.Del("shardSelector")
		req = req.Clone(req.Context())
		req.URL.RawQuery = q.Encode()
	}
	return d.next.RoundTrip(req)
}
