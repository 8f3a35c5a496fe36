package bench

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/bench/internal/sidebyside"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/reflector"
)

// running starts run in a goroutine and returns the function that stops it and
// waits for it to return.
func running(run func(context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	// Goroutine owned by the caller: ends once stop cancels ctx.
	go func() { defer close(done); run(ctx) }()
	return func() { cancel(); <-done }
}

// BenchmarkInformerUpdateWithSlowHandler: an informer of 1,000 ConfigMaps has two
// handlers, one that sleeps 1 ms per update and one that counts. One op sends one
// update into the watch and waits until the counting handler has it (it signals on a
// channel, so no polling interval is measured): the latency of
// an event through the pipeline while a slow handler falls further and further
// behind (each listener has its own unbounded buffer, so it should not matter).
//
// Fair: the same objects, updates and handlers on both sides, RealFIFO on both.
// [client-go: BenchmarkAddWithSlowHandlers]
func BenchmarkInformerUpdateWithSlowHandler(b *testing.B) {
	const n = 1000
	w := newInformerWorkload(n)
	update := func(i int) *corev1.ConfigMap {
		u := *w.list[i%n]
		u.ResourceVersion = strconv.Itoa(n + i + 1)
		return &u
	}
	slow := func() { time.Sleep(time.Millisecond) }
	sidebyside.Pair(b, func(b *testing.B) {
		events := make(chan reflector.Event[*corev1.ConfigMap], 1)
		inf := informer.NewSharedIndexInformer(oursSource(func() ([]*corev1.ConfigMap, string) { return w.list, strconv.Itoa(n) }, events), namespaceIndexed[*corev1.ConfigMap](informer.RealFIFOQueue))
		seen := make(chan struct{}, 1)
		for _, h := range []informer.HandlerFuncs[*corev1.ConfigMap]{
			{UpdateFunc: func(_, _ *corev1.ConfigMap) { slow() }},
			{UpdateFunc: func(_, _ *corev1.ConfigMap) { seen <- struct{}{} }},
		} {
			if _, err := inf.AddEventHandler(h); err != nil {
				b.Fatal(err)
			}
		}
		defer running(inf.Run)()
		waitSynced(inf.HasSynced)
		i := 0
		sidebyside.Loop(b, func() {
			events <- reflector.Event[*corev1.ConfigMap]{Type: watch.Modified, Object: update(i)}
			i++
			<-seen
		})
	}, func(b *testing.B) {
		list := configMapList(w.list, n)
		events := make(chan watch.Event, 1)
		inf := cache.NewSharedIndexInformer(clientGoSource(func() runtime.Object { return list }, events), &corev1.ConfigMap{}, 0, clientGoNamespaceIndexed)
		seen := make(chan struct{}, 1)
		for _, h := range []cache.ResourceEventHandlerFuncs{
			{UpdateFunc: func(_, _ any) { slow() }},
			{UpdateFunc: func(_, _ any) { seen <- struct{}{} }},
		} {
			if _, err := inf.AddEventHandler(h); err != nil {
				b.Fatal(err)
			}
		}
		defer running(inf.RunWithContext)()
		waitSynced(inf.HasSynced)
		i := 0
		sidebyside.Loop(b, func() {
			events <- watch.Event{Type: watch.Modified, Object: update(i)}
			i++
			<-seen
		})
	})
}

// configMapList is client-go's list object for a source: built once, its items
// copied from objs.
func configMapList(objs []*corev1.ConfigMap, rv int) *corev1.ConfigMapList {
	l := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(rv)}, Items: make([]corev1.ConfigMap, len(objs))}
	for i, o := range objs {
		l.Items[i] = *o
	}
	return l
}

// podList is configMapList for Pods.
func podList(objs []*corev1.Pod, rv int) *corev1.PodList {
	l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(rv)}, Items: make([]corev1.Pod, len(objs))}
	for i, o := range objs {
		l.Items[i] = *o
	}
	return l
}

// BenchmarkInformerReplayToLateHandler: an informer has synced 50,000 ConfigMaps; one
// op adds a handler, waits until it has been replayed every object as an add, and
// removes it (a controller started late, or a second controller sharing the informer).
//
// Fair: the same running informer content on both sides; each replays its cache to
// the new handler through its own listener.
func BenchmarkInformerReplayToLateHandler(b *testing.B) {
	const n = 50_000
	w := newInformerWorkload(n)
	sidebyside.Pair(b, func(b *testing.B) {
		events := make(chan reflector.Event[*corev1.ConfigMap])
		inf := informer.NewSharedIndexInformer(oursSource(func() ([]*corev1.ConfigMap, string) { return w.list, strconv.Itoa(n) }, events), namespaceIndexed[*corev1.ConfigMap](informer.RealFIFOQueue))
		defer running(inf.Run)()
		waitSynced(inf.HasSynced)
		sidebyside.Loop(b, func() {
			var adds atomic.Int64
			done := make(chan struct{})
			reg, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(*corev1.ConfigMap, bool) {
				if adds.Add(1) == n {
					close(done)
				}
			}})
			if err != nil {
				b.Fatal(err)
			}
			<-done
			inf.RemoveEventHandler(reg)
		})
	}, func(b *testing.B) {
		list := configMapList(w.list, n)
		events := make(chan watch.Event)
		inf := cache.NewSharedIndexInformer(clientGoSource(func() runtime.Object { return list }, events), &corev1.ConfigMap{}, 0, clientGoNamespaceIndexed)
		defer running(inf.RunWithContext)()
		waitSynced(inf.HasSynced)
		sidebyside.Loop(b, func() {
			var adds atomic.Int64
			done := make(chan struct{})
			reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) {
				if adds.Add(1) == n {
					close(done)
				}
			}})
			if err != nil {
				b.Fatal(err)
			}
			<-done
			if err := inf.RemoveEventHandler(reg); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// relistWorkload is BenchmarkInformerRelistWithDeletions's data: the first list of n
// ConfigMaps, and the relist's: every tenth gone, the rest at a new resourceVersion.
type relistWorkload struct {
	first, second []*corev1.ConfigMap
	updates       int64
	deletes       int64
}

func newRelistWorkload(n int) relistWorkload {
	w := relistWorkload{first: newInformerWorkload(n).list}
	for i, c := range w.first {
		if i%10 == 0 {
			w.deletes++
			continue
		}
		u := *c
		u.ResourceVersion = strconv.Itoa(2*n + i)
		w.second = append(w.second, &u)
		w.updates++
	}
	return w
}

// relistCounter counts the updates and deletes a relist delivers.
type relistCounter struct {
	updates, deletes atomic.Int64
	want             relistWorkload
	done             chan struct{}
}

func (c *relistCounter) seen() {
	if c.updates.Load() == c.want.updates && c.deletes.Load() == c.want.deletes {
		close(c.done)
	}
}

// BenchmarkInformerRelistWithDeletions: an informer has synced 50,000 ConfigMaps; its
// watch ends with 410 Gone, and the relist returns 45,000 of them at new versions
// (5,000 were deleted meanwhile). One op is that relist: from the moment the reflector
// asks for the list until the handler has seen 45,000 updates and 5,000 deletes. A
// fresh informer is synced, and the 410 sent, with the timer stopped; the timer also
// skips each reflector's backoff before the relist.
//
// Fair: the same two lists on both sides; both reflectors relist after the 410 and
// replace their cache; RealFIFO on both.
func BenchmarkInformerRelistWithDeletions(b *testing.B) {
	const n = 50_000
	w := newRelistWorkload(n)
	gone := &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"}
	sidebyside.Pair(b, func(b *testing.B) {
		sidebyside.Loop(b, func() {
			b.StopTimer()
			lists := make(chan struct{})
			var calls atomic.Int32
			list := func() ([]*corev1.ConfigMap, string) {
				if calls.Add(1) == 1 {
					return w.first, strconv.Itoa(n)
				}
				lists <- struct{}{} // the relist: the timer starts
				<-lists
				return w.second, strconv.Itoa(3 * n)
			}
			events := make(chan reflector.Event[*corev1.ConfigMap], 1)
			inf := informer.NewSharedIndexInformer(oursSource(list, events), namespaceIndexed[*corev1.ConfigMap](informer.RealFIFOQueue))
			c := &relistCounter{want: w, done: make(chan struct{})}
			if _, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
				UpdateFunc: func(_, _ *corev1.ConfigMap) { c.updates.Add(1); c.seen() },
				DeleteFunc: func(informer.DeletedObject[*corev1.ConfigMap]) {
					c.deletes.Add(1)
					c.seen()
				},
			}); err != nil {
				b.Fatal(err)
			}
			stop := running(inf.Run)
			waitSynced(inf.HasSynced)
			events <- reflector.Event[*corev1.ConfigMap]{Type: watch.Error, Status: gone}
			<-lists
			b.StartTimer()
			lists <- struct{}{}
			<-c.done
			b.StopTimer()
			stop()
			b.StartTimer()
		})
	}, func(b *testing.B) {
		first, second := configMapList(w.first, n), configMapList(w.second, 3*n)
		sidebyside.Loop(b, func() {
			b.StopTimer()
			lists := make(chan struct{})
			var calls atomic.Int32
			list := func() runtime.Object {
				if calls.Add(1) == 1 {
					return first
				}
				lists <- struct{}{}
				<-lists
				return second
			}
			events := make(chan watch.Event, 1)
			inf := cache.NewSharedIndexInformer(clientGoSource(list, events), &corev1.ConfigMap{}, 0, clientGoNamespaceIndexed)
			c := &relistCounter{want: w, done: make(chan struct{})}
			if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				UpdateFunc: func(_, _ any) { c.updates.Add(1); c.seen() },
				DeleteFunc: func(any) { c.deletes.Add(1); c.seen() },
			}); err != nil {
				b.Fatal(err)
			}
			stop := running(inf.RunWithContext)
			waitSynced(inf.HasSynced)
			events <- watch.Event{Type: watch.Error, Object: gone}
			<-lists
			b.StartTimer()
			lists <- struct{}{}
			<-c.done
			b.StopTimer()
			stop()
			b.StartTimer()
		})
	})
}
