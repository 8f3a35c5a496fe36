package bench

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/listers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/bench/internal/sidebyside"
	"github.com/kubeinternals/informers/indexer"
)

// The indexer workloads: 10,000 pods spread over 100 namespaces (100 pods each) and 50
// "app" label values (200 pods each; 2 per namespace). Both stores have the same two indexes: by
// namespace and by the app label.
const (
	benchPods       = 10_000
	benchNamespaces = 100
	benchApps       = 50
)

// benchPod is pod i of the workload; version distinguishes otherwise identical
// updates, app is its app label.
func benchPod(i, version, app int) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace:       fmt.Sprintf("ns-%d", i%benchNamespaces),
		Name:            fmt.Sprintf("pod-%d", i),
		ResourceVersion: fmt.Sprint(version),
		Labels:          map[string]string{"app": fmt.Sprintf("app-%d", app)},
	}}
}

// benchOrder is a fixed random permutation of the pods: updates arrive in no particular
// order, so neither store gets the benefit of walking its memory in insertion order.
var benchOrder = rand.New(rand.NewPCG(1, 2)).Perm(benchPods)

// benchPodVersions returns two versions of every pod. With moveApp the second version
// carries a different app label, so every update moves the pod in the app index.
func benchPodVersions(moveApp bool) [2][]*corev1.Pod {
	var v [2][]*corev1.Pod
	for i := range benchPods {
		app := (i / benchNamespaces) % benchApps
		app2 := app
		if moveApp {
			app2 = (app + 1) % benchApps
		}
		v[0] = append(v[0], benchPod(i, 1, app))
		v[1] = append(v[1], benchPod(i, 2, app2))
	}
	return v
}

func oursPodIndexer(b *testing.B, pods []*corev1.Pod) indexer.Indexer[*corev1.Pod] {
	idx := indexer.New(indexer.Options[*corev1.Pod]{Indexers: indexer.Indexers[*corev1.Pod]{
		indexer.NamespaceIndex: indexer.MetaNamespaceIndexFunc[*corev1.Pod],
		"app": func(p *corev1.Pod) ([]string, error) {
			return []string{p.Labels["app"]}, nil
		},
	}})
	for _, p := range pods {
		if err := idx.Add(p); err != nil {
			b.Fatal(err)
		}
	}
	return idx
}

func clientGoPodIndexer(b *testing.B, pods []*corev1.Pod) cache.Indexer {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		"app": func(obj any) ([]string, error) {
			return []string{obj.(*corev1.Pod).Labels["app"]}, nil
		},
	})
	for _, p := range pods {
		if err := idx.Add(p); err != nil {
			b.Fatal(err)
		}
	}
	return idx
}

// BenchmarkIndexerUpdate: one Update per op of an existing pod (in random order) whose
// index values do not change (the steady state of a cache: status and resourceVersion
// churn).
//
// Fair: both stores hold the same 10k pods with the same two indexes and see the same
// updates in the same order; each side's index functions do the same work.
func BenchmarkIndexerUpdate(b *testing.B) {
	benchmarkIndexerUpdates(b, benchPodVersions(false))
}

// BenchmarkIndexerUpdateMovingIndex: one Update per op that moves the pod from one app
// label value to another (the slow path: remove from the old set, add to the new).
//
// Fair: as BenchmarkIndexerUpdate, every update moving the pod in the app index.
func BenchmarkIndexerUpdateMovingIndex(b *testing.B) {
	benchmarkIndexerUpdates(b, benchPodVersions(true))
}

// benchmarkIndexerUpdates alternates each pod between its two versions, visiting the
// pods in benchOrder.
func benchmarkIndexerUpdates(b *testing.B, v [2][]*corev1.Pod) {
	run := func(b *testing.B, update func(*corev1.Pod) error) { alternateUpdates(b, v, benchOrder, update) }
	sidebyside.Pair(b, func(b *testing.B) {
		idx := oursPodIndexer(b, v[0])
		run(b, idx.Update)
	}, func(b *testing.B) {
		idx := clientGoPodIndexer(b, v[0])
		run(b, func(p *corev1.Pod) error { return idx.Update(p) })
	})
}

// BenchmarkIndexerByIndex: ByIndex(namespace, ns-k) on 10k pods; each op returns 100.
//
// Fair: the same store content and namespaces; both return a fresh slice of the
// 100 objects.
func BenchmarkIndexerByIndex(b *testing.B) {
	v := benchPodVersions(false)
	ns := make([]string, benchNamespaces)
	for i := range ns {
		ns[i] = fmt.Sprintf("ns-%d", i)
	}
	sidebyside.Pair(b, func(b *testing.B) {
		idx := oursPodIndexer(b, v[0])
		i := 0
		sidebyside.Loop(b, func() {
			got, err := idx.ByIndex(indexer.NamespaceIndex, ns[i%benchNamespaces])
			if err != nil || len(got) != benchPods/benchNamespaces {
				b.Fatal(len(got), err)
			}
			i++
		})
	}, func(b *testing.B) {
		idx := clientGoPodIndexer(b, v[0])
		i := 0
		sidebyside.Loop(b, func() {
			got, err := idx.ByIndex(cache.NamespaceIndex, ns[i%benchNamespaces])
			if err != nil || len(got) != benchPods/benchNamespaces {
				b.Fatal(len(got), err)
			}
			i++
		})
	})
}

// BenchmarkIndexerReplace: Replace the whole content of a populated 10k-pod indexer
// with the other version of every pod (what a relist does), indexes rebuilt.
//
// Fair: the same two lists alternate on both sides; client-go's are []any built once
// outside the loop (its reflector builds that slice as it extracts the list).
func BenchmarkIndexerReplace(b *testing.B) {
	v := benchPodVersions(true)
	sidebyside.Pair(b, func(b *testing.B) {
		idx := oursPodIndexer(b, v[0])
		i := 0
		sidebyside.Loop(b, func() {
			i++
			if err := idx.Replace(v[i%2], "1"); err != nil {
				b.Fatal(err)
			}
		})
	}, func(b *testing.B) {
		idx := clientGoPodIndexer(b, v[0])
		lists := [2][]any{}
		for k := range lists {
			for _, p := range v[k] {
				lists[k] = append(lists[k], p)
			}
		}
		i := 0
		sidebyside.Loop(b, func() {
			i++
			if err := idx.Replace(lists[i%2], "1"); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkListerListSelector: a lister List across all namespaces with the selector
// app=app-7 over 10k pods; each op returns 200.
//
// Fair: our Lister against client-go's generic listers.New over the same content;
// both walk every object and match the same selector.
func BenchmarkListerListSelector(b *testing.B) {
	v := benchPodVersions(false)
	sel := labels.SelectorFromSet(labels.Set{"app": "app-7"})
	want := benchPods / benchApps
	sidebyside.Pair(b, func(b *testing.B) {
		l := indexer.NewLister(oursPodIndexer(b, v[0]))
		sidebyside.Loop(b, func() {
			got, err := l.List(sel)
			if err != nil || len(got) != want {
				b.Fatal(len(got), err)
			}
		})
	}, func(b *testing.B) {
		l := listers.New[*corev1.Pod](clientGoPodIndexer(b, v[0]), schema.GroupResource{Resource: "pods"})
		sidebyside.Loop(b, func() {
			got, err := l.List(sel)
			if err != nil || len(got) != want {
				b.Fatal(len(got), err)
			}
		})
	})
}

// BenchmarkListerNamespaceList: a namespaced lister List (through the namespace index)
// with the selector app=app-7; each op returns the 2 matching pods of the namespace.
//
// Fair: both go through their namespace index, then match the selector on its 100 pods.
func BenchmarkListerNamespaceList(b *testing.B) {
	v := benchPodVersions(false)
	sel := labels.SelectorFromSet(labels.Set{"app": "app-7"})
	sidebyside.Pair(b, func(b *testing.B) {
		l := indexer.NewLister(oursPodIndexer(b, v[0])).Namespace("ns-7")
		sidebyside.Loop(b, func() {
			got, err := l.List(sel)
			if err != nil || len(got) != 2 {
				b.Fatal(len(got), err)
			}
		})
	}, func(b *testing.B) {
		base := listers.New[*corev1.Pod](clientGoPodIndexer(b, v[0]), schema.GroupResource{Resource: "pods"})
		l := listers.NewNamespaced(base, "ns-7")
		sidebyside.Loop(b, func() {
			got, err := l.List(sel)
			if err != nil || len(got) != 2 {
				b.Fatal(len(got), err)
			}
		})
	})
}

// alternateUpdates is the loop of the update benchmarks: op i updates pod order[i%n]
// to the other of its two versions (the first pass to v[1], the next back to v[0]).
func alternateUpdates(b *testing.B, v [2][]*corev1.Pod, order []int, update func(*corev1.Pod) error) {
	n := len(order)
	i := 0
	sidebyside.Loop(b, func() {
		if err := update(v[(i/n+1)%2][order[i%n]]); err != nil {
			b.Fatal(err)
		}
		i++
	})
}
