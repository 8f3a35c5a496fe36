package bench

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/listers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/bench/internal/heapsample"
	"github.com/kubeinternals/informers/bench/internal/sidebyside"
	"github.com/kubeinternals/informers/indexer"
)

// The lister workloads read caches of many sizes. A pod here looks like a ReplicaSet's:
// a namespace, a name, two labels, a node and an owner.

// scaledPods returns n pods over namespaces namespaces, labelled app=app-(i%50), on
// node-(i%nodes), each owned by one of n/100 ReplicaSets.
func scaledPods(n, namespaces int) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       fmt.Sprintf("ns-%d", i%namespaces),
				Name:            fmt.Sprintf("pod-%d", i),
				ResourceVersion: "1",
				Labels:          map[string]string{"app": fmt.Sprintf("app-%d", i%50), "tier": "web"},
				OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: fmt.Sprintf("rs-%d", i/100), UID: types.UID(fmt.Sprintf("uid-rs-%d", i/100))}},
			},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i%500)},
		}
	}
	return pods
}

// Both sides' index functions for the same two indexes: by namespace and by node.
var (
	oursByNode = func(p *corev1.Pod) ([]string, error) { return []string{p.Spec.NodeName}, nil }
	cgByNode   = func(obj any) ([]string, error) { return []string{obj.(*corev1.Pod).Spec.NodeName}, nil }
)

func oursIndexed(b *testing.B, pods []*corev1.Pod, extra indexer.Indexers[*corev1.Pod]) indexer.Indexer[*corev1.Pod] {
	defs := indexer.Indexers[*corev1.Pod]{indexer.NamespaceIndex: indexer.MetaNamespaceIndexFunc[*corev1.Pod]}
	for k, v := range extra {
		defs[k] = v
	}
	idx := indexer.New(indexer.Options[*corev1.Pod]{Indexers: defs})
	for _, p := range pods {
		if err := idx.Add(p); err != nil {
			b.Fatal(err)
		}
	}
	return idx
}

func clientGoIndexed(b *testing.B, pods []*corev1.Pod, extra cache.Indexers) cache.Indexer {
	defs := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	for k, v := range extra {
		defs[k] = v
	}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, defs)
	for _, p := range pods {
		if err := idx.Add(p); err != nil {
			b.Fatal(err)
		}
	}
	return idx
}

var podsResource = schema.GroupResource{Resource: "pods"}

// BenchmarkListerList: a lister List across all namespaces over n pods, with a
// selector that matches 1 pod in 50 (app=app-7) and one that matches nothing
// (app=none).
//
// Fair: our Lister against client-go's generic listers.New over the same pods in
// 100 namespaces; both walk every object and match the same selector.
// [client-go: BenchmarkLister_Match_*]
func BenchmarkListerList(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000, 1_000_000} {
		pods := scaledPods(n, 100)
		for _, sel := range []struct {
			name string
			set  labels.Set
			want int
		}{{"match=2%", labels.Set{"app": "app-7"}, n / 50}, {"match=none", labels.Set{"app": "none"}, 0}} {
			selector := labels.SelectorFromSet(sel.set)
			b.Run(fmt.Sprintf("n=%s/%s", count(n), sel.name), func(b *testing.B) {
				sidebyside.Pair(b, func(b *testing.B) {
					l := indexer.NewLister(oursIndexed(b, pods, nil))
					sidebyside.Loop(b, func() {
						if got, err := l.List(selector); err != nil || len(got) != sel.want {
							b.Fatal(len(got), err)
						}
					})
				}, func(b *testing.B) {
					l := listers.New[*corev1.Pod](clientGoIndexed(b, pods, nil), podsResource)
					sidebyside.Loop(b, func() {
						if got, err := l.List(selector); err != nil || len(got) != sel.want {
							b.Fatal(len(got), err)
						}
					})
				})
			})
		}
	}
}

// count prints 1000 as 1k and 1000000 as 1M, for sub-benchmark names.
func count(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1_000 && n%1_000 == 0:
		return fmt.Sprintf("%dk", n/1_000)
	}
	return fmt.Sprint(n)
}

// BenchmarkListerGet100k: a namespaced lister Get of one of 100,000 pods, in a fixed
// random order (the reconcile loop's read), through a lister held the way a
// controller holds it: in a field of its struct, as foo-controller and
// sample-controller do.
//
// Fair: the same pods and the same sequence of names on both sides, each read through
// the lister interface in a struct field, a namespace, then Get — client-go's typed
// PodLister (Pods(ns).Get), our Lister (Namespace(ns).Get). The struct is built where
// the compiler cannot see which lister it holds, as in a real controller.
func BenchmarkListerGet100k(b *testing.B) {
	const n = 100_000
	pods := scaledPods(n, 100)
	order := rand.New(rand.NewPCG(3, 4)).Perm(n)
	sidebyside.Pair(b, func(b *testing.B) {
		c := newOursPodController(indexer.NewLister(oursIndexed(b, pods, nil)))
		i := 0
		sidebyside.Loop(b, func() {
			p := pods[order[i%n]]
			i++
			if err := c.read(p.Namespace, p.Name); err != nil {
				b.Fatal(err)
			}
		})
	}, func(b *testing.B) {
		c := newClientGoPodController(corelisters.NewPodLister(clientGoIndexed(b, pods, nil)))
		i := 0
		sidebyside.Loop(b, func() {
			p := pods[order[i%n]]
			i++
			if err := c.read(p.Namespace, p.Name); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// oursPodController and clientGoPodController hold a lister as a controller does.
type oursPodController struct{ pods indexer.Lister[*corev1.Pod] }

type clientGoPodController struct{ pods corelisters.PodLister }

// Why noinline: built inline, the compiler would see the lister's concrete type and
// devirtualise the calls, which a controller built in another package never gets.
//
//go:noinline
func newOursPodController(l indexer.Lister[*corev1.Pod]) *oursPodController {
	return &oursPodController{pods: l}
}

//go:noinline
func newClientGoPodController(l corelisters.PodLister) *clientGoPodController {
	return &clientGoPodController{pods: l}
}

//go:noinline
func (c *oursPodController) read(ns, name string) error {
	_, err := c.pods.Namespace(ns).Get(name)
	return err
}

//go:noinline
func (c *clientGoPodController) read(ns, name string) error {
	_, err := c.pods.Pods(ns).Get(name)
	return err
}

// BenchmarkListerGet100kDevirtualized: BenchmarkListerGet100k with each lister in a
// local variable the compiler can see through.
//
// Fair: the same pods, names and calls as BenchmarkListerGet100k.
//
// Not in the headline: with the concrete type in view the compiler devirtualises and
// inlines differently on the two sides (ours allocates 24 B, client-go's 16 B), which
// measures the optimiser, not the lister a controller calls.
func BenchmarkListerGet100kDevirtualized(b *testing.B) {
	const n = 100_000
	pods := scaledPods(n, 100)
	order := rand.New(rand.NewPCG(3, 4)).Perm(n)
	sidebyside.Pair(b, func(b *testing.B) {
		l := indexer.NewLister(oursIndexed(b, pods, nil))
		i := 0
		sidebyside.Loop(b, func() {
			p := pods[order[i%n]]
			i++
			if _, err := l.Namespace(p.Namespace).Get(p.Name); err != nil {
				b.Fatal(err)
			}
		})
	}, func(b *testing.B) {
		var l corelisters.PodLister = corelisters.NewPodLister(clientGoIndexed(b, pods, nil))
		i := 0
		sidebyside.Loop(b, func() {
			p := pods[order[i%n]]
			i++
			if _, err := l.Pods(p.Namespace).Get(p.Name); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkIndexerByIndexSkewed: ByIndex on the namespace index of 100,000 pods where
// half live in one huge namespace and the rest are spread over 500 or 2,500 small ones
// (the odd-numbered of 1,000 or 5,000: the shape of a real cluster with one big
// tenant). lookup=small asks for a small namespace (100 or 20 pods), lookup=huge for
// the big one (50,000 pods).
//
// Fair: the same pods and lookups on both sides; both return a new slice of the
// namespace's objects.
func BenchmarkIndexerByIndexSkewed(b *testing.B) {
	const n = 100_000
	for _, namespaces := range []int{1000, 5000} {
		pods := scaledPods(n, namespaces)
		for i := 0; i < n; i += 2 {
			pods[i].Namespace = "huge"
		}
		for _, lookup := range []string{"small", "huge"} {
			want := n / 2
			names := []string{"huge"}
			if lookup == "small" {
				// The even namespaces' pods all moved to "huge"; each odd one keeps
				// its n/namespaces.
				want = n / namespaces
				names = names[:0]
				for k := 1; k < namespaces; k += 2 {
					names = append(names, fmt.Sprintf("ns-%d", k))
				}
			}
			b.Run(fmt.Sprintf("namespaces=%d/lookup=%s", namespaces, lookup), func(b *testing.B) {
				sidebyside.Pair(b, func(b *testing.B) {
					idx := oursIndexed(b, pods, nil)
					i := 0
					sidebyside.Loop(b, func() {
						got, err := idx.ByIndex(indexer.NamespaceIndex, names[i%len(names)])
						i++
						if err != nil || len(got) != want {
							b.Fatal(len(got), err)
						}
					})
				}, func(b *testing.B) {
					idx := clientGoIndexed(b, pods, nil)
					i := 0
					sidebyside.Loop(b, func() {
						got, err := idx.ByIndex(cache.NamespaceIndex, names[i%len(names)])
						i++
						if err != nil || len(got) != want {
							b.Fatal(len(got), err)
						}
					})
				})
			})
		}
	}
}

// BenchmarkIndexerMultiValueIndexUpdate: 10,000 pods with a multi-value index "refs"
// that files each pod under its node and its owner (two values per pod, as a
// controller watching both would define it), plus the namespace index. One Update
// per op moves the pod to another node: one of its two values changes.
//
// Fair: the same index functions (returning two values) and the same updates in the
// same order on both sides.
func BenchmarkIndexerMultiValueIndexUpdate(b *testing.B) {
	const n = 10_000
	v := [2][]*corev1.Pod{scaledPods(n, 100), scaledPods(n, 100)}
	for i, p := range v[1] {
		p.ResourceVersion = "2"
		p.Spec.NodeName = fmt.Sprintf("node-%d", (i+1)%500)
	}
	oursRefs := func(p *corev1.Pod) ([]string, error) {
		return []string{"node/" + p.Spec.NodeName, "owner/" + string(p.OwnerReferences[0].UID)}, nil
	}
	cgRefs := func(obj any) ([]string, error) {
		p := obj.(*corev1.Pod)
		return []string{"node/" + p.Spec.NodeName, "owner/" + string(p.OwnerReferences[0].UID)}, nil
	}
	order := rand.New(rand.NewPCG(5, 6)).Perm(n)
	run := func(b *testing.B, update func(*corev1.Pod) error) { alternateUpdates(b, v, order, update) }
	sidebyside.Pair(b, func(b *testing.B) {
		idx := oursIndexed(b, v[0], indexer.Indexers[*corev1.Pod]{"refs": oursRefs})
		run(b, idx.Update)
	}, func(b *testing.B) {
		idx := clientGoIndexed(b, v[0], cache.Indexers{"refs": cgRefs})
		run(b, func(p *corev1.Pod) error { return idx.Update(p) })
	})
}

// BenchmarkIndexerBuild100kTwoIndexes: Add 100,000 pods to an empty indexer with the
// namespace and node indexes. Besides the time, it reports what the indexer itself
// keeps per key once built: B-overhead/key is the live heap after a collection, above
// the live heap of the pods alone, divided by 100,000 (the objects are excluded: both
// sides hold the same pointers).
//
// Fair: the same pods, keys and index functions on both sides; the measurement of
// the live heap runs with the timer stopped.
func BenchmarkIndexerBuild100kTwoIndexes(b *testing.B) {
	const n = 100_000
	pods := scaledPods(n, 100)
	run := func(b *testing.B, build func() any) {
		var overhead float64
		ops := 0
		var keep any
		sidebyside.Loop(b, func() {
			b.StopTimer()
			keep = nil
			heap := heapsample.Start()
			b.StartTimer()
			keep = build()
			_, live := heap.Finish(b)
			overhead += live * (1 << 20) / n
			ops++
		})
		_ = keep
		b.ReportMetric(overhead/float64(ops), "B-overhead/key")
	}
	sidebyside.Pair(b, func(b *testing.B) {
		run(b, func() any { return oursIndexed(b, pods, indexer.Indexers[*corev1.Pod]{"node": oursByNode}) })
	}, func(b *testing.B) {
		run(b, func() any { return clientGoIndexed(b, pods, cache.Indexers{"node": cgByNode}) })
	})
}
