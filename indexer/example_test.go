package indexer_test

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubeinternals/informers/indexer"
)

func pod(namespace, name, node string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: lbls},
		Spec:       corev1.PodSpec{NodeName: node},
	}
}

// An Indexer with an index by node answers "which pods run on node-1?" without a scan,
// and follows a pod when it moves.
func ExampleNew() {
	pods := indexer.New(indexer.Options[*corev1.Pod]{Indexers: indexer.Indexers[*corev1.Pod]{
		indexer.NamespaceIndex: indexer.MetaNamespaceIndexFunc[*corev1.Pod],
		"node": func(p *corev1.Pod) ([]string, error) {
			if p.Spec.NodeName == "" {
				return nil, nil // not scheduled yet: in no node's entry
			}
			return []string{p.Spec.NodeName}, nil
		},
	}})

	_ = pods.Add(pod("shop", "web-1", "node-1", nil))
	_ = pods.Add(pod("shop", "web-2", "node-2", nil))
	_ = pods.Add(pod("kube-system", "dns", "node-1", nil))

	keys, _ := pods.IndexKeys("node", "node-1")
	fmt.Println("on node-1:", keys)

	_ = pods.Update(pod("shop", "web-1", "node-2", nil)) // rescheduled
	keys, _ = pods.IndexKeys("node", "node-2")
	fmt.Println("on node-2:", keys)

	_, err := pods.ByIndex("zone", "a")
	fmt.Println(errors.Is(err, indexer.ErrUnknownIndex))
	// Output:
	// on node-1: [kube-system/dns shop/web-1]
	// on node-2: [shop/web-1 shop/web-2]
	// true
}

// An IndexFunc that fails returns an error from the write and leaves the cache as it
// was; client-go would panic.
func ExampleIndexFunc_error() {
	pods := indexer.New(indexer.Options[*corev1.Pod]{Indexers: indexer.Indexers[*corev1.Pod]{
		"owner": func(p *corev1.Pod) ([]string, error) {
			if len(p.OwnerReferences) > 1 {
				return nil, errors.New("more than one owner")
			}
			return []string{p.Labels["owner"]}, nil
		},
	}})
	odd := pod("shop", "odd", "", nil)
	odd.OwnerReferences = make([]metav1.OwnerReference, 2)

	err := pods.Add(odd)
	fmt.Println(errors.Is(err, indexer.ErrIndexFunc))
	fmt.Println(err)
	fmt.Println("stored:", len(pods.List()))
	// Output:
	// true
	// index function failed: index "owner", key "shop/odd": more than one owner
	// stored: 0
}

// A Lister reads the cache the way a controller's worker does.
func ExampleNewLister() {
	pods := indexer.New(indexer.Options[*corev1.Pod]{Indexers: indexer.Indexers[*corev1.Pod]{
		indexer.NamespaceIndex: indexer.MetaNamespaceIndexFunc[*corev1.Pod],
	}})
	_ = pods.Add(pod("shop", "web-1", "", map[string]string{"app": "web"}))
	_ = pods.Add(pod("shop", "db-1", "", map[string]string{"app": "db"}))
	_ = pods.Add(pod("blog", "web-1", "", map[string]string{"app": "web"}))

	lister := indexer.NewLister(pods)
	web, _ := lister.Namespace("shop").List(labels.SelectorFromSet(labels.Set{"app": "web"}))
	for _, p := range web {
		fmt.Println(p.Namespace + "/" + p.Name)
	}

	_, err := lister.Namespace("shop").Get("web-2")
	fmt.Println(errors.Is(err, indexer.ErrNotFound), err)
	// Output:
	// shop/web-1
	// true object not found in cache: "shop/web-2"
}
