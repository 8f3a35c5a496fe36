package deltafifo_test

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/deltafifo"
)

// store is a minimal consumer cache; an informer uses its indexer here.
type store map[string]*corev1.ConfigMap

func (s store) ListKeys() []string { return slices.Sorted(maps.Keys(s)) }
func (s store) GetByKey(key string) (*corev1.ConfigMap, bool, error) {
	o, ok := s[key]
	return o, ok, nil
}

func configMap(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv}}
}

// A DeltaFIFO groups each object's changes under its key, and a relist that no
// longer contains an object produces a typed tombstone for it.
func ExampleDeltaFIFO() {
	cache := store{}
	q := deltafifo.NewDeltaFIFO(deltafifo.DeltaFIFOOptions[*corev1.ConfigMap]{KnownObjects: cache})
	process := func(deltas deltafifo.Deltas[*corev1.ConfigMap], isInInitialList bool) error {
		for _, d := range deltas {
			name := d.Object.Namespace + "/" + d.Object.Name
			switch {
			case d.Tombstone != nil:
				fmt.Printf("%s %s (missed while the watch was down; last seen at rv %s)\n", d.Type, d.Tombstone.Key, d.Object.ResourceVersion)
				delete(cache, d.Tombstone.Key)
			case d.Type == deltafifo.Deleted:
				fmt.Println(d.Type, name)
				delete(cache, name)
			default:
				fmt.Println(d.Type, name, "rv", d.Object.ResourceVersion, "initial:", isInInitialList)
				cache[name] = d.Object
			}
		}
		return nil
	}
	// pop pops n keys; Pop blocks on an empty queue, so we pop exactly what we queued.
	pop := func(n int) {
		for range n {
			if err := q.Pop(context.Background(), process); err != nil {
				fmt.Println(err)
			}
		}
	}

	_ = q.Replace([]*corev1.ConfigMap{configMap("a", "1"), configMap("b", "1")}, "1") // the initial LIST
	pop(2)
	fmt.Println("synced:", q.HasSynced())

	_ = q.Update(configMap("a", "2"))
	_ = q.Update(configMap("a", "3")) // same key: appended to a's deltas
	pop(1)

	// The watch breaks; b is deleted meanwhile; the relist no longer has it.
	_ = q.Replace([]*corev1.ConfigMap{configMap("a", "3")}, "5")
	pop(2)
	fmt.Println("cache:", cache.ListKeys())

	// Output:
	// Replaced default/a rv 1 initial: true
	// Replaced default/b rv 1 initial: true
	// synced: true
	// Updated default/a rv 2 initial: false
	// Updated default/a rv 3 initial: false
	// Replaced default/a rv 3 initial: false
	// Deleted default/b (missed while the watch was down; last seen at rv 1)
	// cache: [default/a]
}

// A RealFIFO keeps every event in order; a relist is one ReplacedAll delta, and
// PopBatch hands over runs of deltas with distinct keys.
func ExampleRealFIFO() {
	q := deltafifo.NewRealFIFO(deltafifo.RealFIFOOptions[*corev1.ConfigMap]{EmitBookmark: true})
	_ = q.Replace([]*corev1.ConfigMap{configMap("a", "1"), configMap("b", "1")}, "1")
	_ = q.Add(configMap("c", "2"))
	_ = q.Update(configMap("a", "3"))
	_ = q.Update(configMap("c", "4")) // c is already in the batch: it starts the next one
	_ = q.Bookmark("5")
	q.Close()

	for {
		err := q.PopBatch(context.Background(), func(batch []deltafifo.Delta[*corev1.ConfigMap], isInInitialList bool) error {
			var parts []string
			for _, d := range batch {
				switch d.Type {
				case deltafifo.ReplacedAll:
					parts = append(parts, fmt.Sprintf("ReplacedAll(%d objects, rv %s)", len(d.Info.Objects), d.Info.ResourceVersion))
				case deltafifo.Bookmark:
					parts = append(parts, "Bookmark(rv "+d.Info.ResourceVersion+")")
				default:
					parts = append(parts, d.Type.String()+" "+d.Object.Name)
				}
			}
			fmt.Println(parts, "initial:", isInInitialList)
			return nil
		})
		if err != nil {
			fmt.Println("done:", err)
			return
		}
	}

	// Output:
	// [ReplacedAll(2 objects, rv 1)] initial: true
	// [Added c Updated a] initial: false
	// [Updated c] initial: false
	// [Bookmark(rv 5)] initial: false
	// done: RealFIFO: queue is closed
}
