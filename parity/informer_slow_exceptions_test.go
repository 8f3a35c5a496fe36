package parity

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/reflector"
)

// listOf is a LIST of n ConfigMaps for both libraries, after which the watch is silent.
type listOf int

func (n listOf) items() []corev1.ConfigMap {
	items := make([]corev1.ConfigMap, n)
	for i := range items {
		items[i] = *configMap(fmt.Sprintf("cm-%d", i), 1)
	}
	return items
}

func (n listOf) List(context.Context, metav1.ListOptions) (reflector.ListResult[*corev1.ConfigMap], error) {
	items := n.items()
	out := reflector.ListResult[*corev1.ConfigMap]{ResourceVersion: "1"}
	for i := range items {
		out.Items = append(out.Items, &items[i])
	}
	return out, nil
}

func (n listOf) Watch(context.Context, metav1.ListOptions) (reflector.Watch[*corev1.ConfigMap], error) {
	return reflector.NewFakeWatch[*corev1.ConfigMap](), nil
}

func (n listOf) clientGo() cache.ListerWatcher {
	return listOfClientGo{&cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: n.items()}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}}
}

// listOfClientGo opts out of the watch-list, so client-go's reflector LISTs.
type listOfClientGo struct{ *cache.ListWatch }

func (listOfClientGo) IsWatchListSemanticsUnSupported() bool { return true }

// A handler that falls behind, in runs over a LIST of 1,100 objects whose first
// notification is held until all are queued: then each call takes callTakes. client-go
// logs a handler call only if it took over 100 ms while more than 1,024 notifications
// waited — one line per such call, nothing for a backlog of fast calls — and only at
// klog verbosity 2 (k8s.io/utils/trace logs nothing below it), so a default klog setup
// shows none of it (found by this test). Ours times no call, and warns once when the
// backlog reaches 1,024, slow calls or fast, at Warn level.
//
// client-go: tools/cache/shared_informer.go processorListener.run
var _ = exception("docs/defaults.md", "Informer and queue", "slow-handler logs", func(t *testing.T) {
	var clientGoLines lines
	klog.SetLogger(clientGoLines.logr())
	defer klog.ClearLogger()
	verbosity := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(verbosity)
	defer func() { _ = verbosity.Set("v", "0") }()
	for _, run := range []struct {
		klogV          string
		callTakes      time.Duration
		clientGoTraces func(n int) bool
	}{
		{"0", 200 * time.Millisecond, func(n int) bool { return n == 0 }},  // klog's default verbosity
		{"2", 200 * time.Millisecond, func(n int) bool { return n >= 70 }}, // the calls that start with more than 1,024 waiting
		{"2", 0, func(n int) bool { return n == 0 }},
	} {
		require.NoError(t, verbosity.Set("v", run.klogV))
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			release := make(chan struct{})
			handle := func() func() {
				first := true
				return func() {
					if first {
						first = false
						<-release
					}
					time.Sleep(run.callTakes)
				}
			}
			before := strings.Count(clientGoLines.String(), "processorListener handler")

			their := cache.NewSharedIndexInformer(listOf(1100).clientGo(), &corev1.ConfigMap{}, 0, cache.Indexers{})
			theirCall := handle()
			_, err := their.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) { theirCall() }})
			require.NoError(t, err)
			go their.RunWithContext(ctx)

			var ourLines lines
			our := informer.NewSharedIndexInformer[*corev1.ConfigMap](listOf(1100), informer.Options[*corev1.ConfigMap]{
				Logger: slog.New(slog.NewTextHandler(&ourLines, nil)), InitialList: reflector.PagedList,
			})
			ourCall := handle()
			_, err = our.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(*corev1.ConfigMap, bool) { ourCall() }})
			require.NoError(t, err)
			go our.Run(ctx)

			synctest.Wait() // every notification queued behind the held first one
			close(release)
			time.Sleep(1100*run.callTakes + time.Second) // fake time, while every notification is handled
			synctest.Wait()
			traces := strings.Count(clientGoLines.String(), "processorListener handler") - before
			require.True(t, run.clientGoTraces(traces), "client-go at -v=%s, calls of %v: %d lines", run.klogV, run.callTakes, traces)
			require.Equal(t, 1, strings.Count(ourLines.String(), "event handler is falling behind"), "ours, calls of %v:\n%s", run.callTakes, ourLines.String())
			cancel()
			synctest.Wait()
		})
	}
})
