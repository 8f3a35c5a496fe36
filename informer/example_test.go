package informer_test

import (
	"context"
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
)

// An informer over an in-memory source: a handler registered before Run sees the
// initial list as adds with isInInitialList=true; once its registration has synced,
// the cache holds everything the source had.
func Example() {
	src := fakeapi.New[*corev1.ConfigMap]()
	for _, name := range []string{"a", "b", "c"} {
		src.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name}})
	}
	inf := informer.NewSharedIndexInformer[*corev1.ConfigMap](src, informer.Options[*corev1.ConfigMap]{
		Indexers: indexer.Indexers[*corev1.ConfigMap]{indexer.NamespaceIndex: indexer.MetaNamespaceIndexFunc[*corev1.ConfigMap]},
	})
	var mu sync.Mutex
	var seen []string
	reg, _ := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap, isInInitialList bool) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, fmt.Sprintf("add %s initial=%v", cm.Name, isInInitialList))
		},
	})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	if err := informer.WaitForCacheSync(ctx, reg); err != nil {
		fmt.Println(err)
	}
	mu.Lock()
	sort.Strings(seen)
	fmt.Println(seen)
	mu.Unlock()
	inDemo, _ := inf.Indexer().ByIndex(indexer.NamespaceIndex, "demo")
	fmt.Println("cached in namespace demo:", len(inDemo))
	cancel()
	<-done
	// Output:
	// [add a initial=true add b initial=true add c initial=true]
	// cached in namespace demo: 3
}
