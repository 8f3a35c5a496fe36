package reflector_test

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/reflector"
)

// printingStore prints what the reflector asks of it and cancels the run after the
// watch's third event.
type printingStore struct {
	events int
	cancel context.CancelFunc
}

func (s *printingStore) Add(o *corev1.ConfigMap) error    { return s.event("Add", o) }
func (s *printingStore) Update(o *corev1.ConfigMap) error { return s.event("Update", o) }
func (s *printingStore) Delete(o *corev1.ConfigMap) error { return s.event("Delete", o) }
func (s *printingStore) Resync() error                    { return nil }

func (s *printingStore) Replace(items []*corev1.ConfigMap, rv string) error {
	names := make([]string, len(items))
	for i, o := range items {
		names[i] = o.Name
	}
	fmt.Printf("Replace [%s] at RV %s\n", strings.Join(names, " "), rv)
	return nil
}

func (s *printingStore) event(op string, o *corev1.ConfigMap) error {
	fmt.Printf("%s %s at RV %s\n", op, o.Name, o.ResourceVersion)
	if s.events++; s.events == 3 {
		s.cancel()
	}
	return nil
}

func configMap(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv}}
}

// With the zero Options, as in client-go 1.37, the reflector asks for the state as a
// stream (a watch-list): one ADDED per object, then a bookmark annotated
// k8s.io/initial-events-end. It replaces the store's content at the bookmark's
// resource version and goes on reading the very same watch: no LIST at all.
func Example() {
	lw := reflector.ListWatch[*corev1.ConfigMap]{
		ListFunc: func(_ context.Context, opts metav1.ListOptions) (reflector.ListResult[*corev1.ConfigMap], error) {
			fmt.Println("LIST (not reached: the server streams the state)")
			return reflector.ListResult[*corev1.ConfigMap]{}, nil
		},
		WatchFunc: func(_ context.Context, opts metav1.ListOptions) (reflector.Watch[*corev1.ConfigMap], error) {
			fmt.Printf("WATCH resourceVersion=%q sendInitialEvents=%v resourceVersionMatch=%s\n",
				opts.ResourceVersion, *opts.SendInitialEvents, opts.ResourceVersionMatch)
			w := reflector.NewFakeWatch[*corev1.ConfigMap]()
			end := configMap("", "10")
			end.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
			// Goroutine owned by this example: plays the server; each Send returns
			// once the reflector has taken the event, or false once it stopped.
			go func() {
				_ = w.Add(configMap("a", "8")) && w.Add(configMap("b", "9")) && w.Bookmark(end) &&
					w.Add(configMap("c", "11")) && w.Modify(configMap("a", "12")) && w.Delete(configMap("b", "13"))
			}()
			return w, nil
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := reflector.NewReflector(lw, &printingStore{cancel: cancel}, reflector.Options[*corev1.ConfigMap]{})
	if err != nil {
		panic(err)
	}
	r.Run(ctx) // returns once the store cancels ctx
	fmt.Println("last synced RV:", r.LastSyncResourceVersion())
	// Output:
	// WATCH resourceVersion="" sendInitialEvents=true resourceVersionMatch=NotOlderThan
	// Replace [a b] at RV 10
	// Add c at RV 11
	// Update a at RV 12
	// Delete b at RV 13
	// last synced RV: 13
}

// The classic path, chosen by name (InitialList: PagedList): the reflector lists once
// at RV "0", replaces the store's content with the list, then watches from the
// list's resource version and applies each event.
func Example_pagedList() {
	lw := reflector.ListWatch[*corev1.ConfigMap]{
		ListFunc: func(_ context.Context, opts metav1.ListOptions) (reflector.ListResult[*corev1.ConfigMap], error) {
			fmt.Printf("LIST  resourceVersion=%q limit=%d\n", opts.ResourceVersion, opts.Limit)
			return reflector.ListResult[*corev1.ConfigMap]{
				Items:           []*corev1.ConfigMap{configMap("a", "8"), configMap("b", "9")},
				ResourceVersion: "10",
			}, nil
		},
		WatchFunc: func(_ context.Context, opts metav1.ListOptions) (reflector.Watch[*corev1.ConfigMap], error) {
			fmt.Printf("WATCH resourceVersion=%q allowWatchBookmarks=%v\n", opts.ResourceVersion, opts.AllowWatchBookmarks)
			w := reflector.NewFakeWatch[*corev1.ConfigMap]()
			// Goroutine owned by this example: plays the server; each Send returns
			// once the reflector has taken the event, or false once it stopped.
			go func() {
				_ = w.Add(configMap("c", "11")) && w.Modify(configMap("a", "12")) && w.Delete(configMap("b", "13"))
			}()
			return w, nil
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := reflector.NewReflector(lw, &printingStore{cancel: cancel}, reflector.Options[*corev1.ConfigMap]{InitialList: reflector.PagedList})
	if err != nil {
		panic(err)
	}
	r.Run(ctx) // returns once the store cancels ctx
	fmt.Println("last synced RV:", r.LastSyncResourceVersion())
	// Output:
	// LIST  resourceVersion="0" limit=500
	// Replace [a b] at RV 10
	// WATCH resourceVersion="10" allowWatchBookmarks=true
	// Add c at RV 11
	// Update a at RV 12
	// Delete b at RV 13
	// last synced RV: 13
}
