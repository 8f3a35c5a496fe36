// Command 03-deltafifo shows the DeltaFIFO, the queue between a reflector and an
// informer's cache. Part 1 needs no cluster: it queues changes by hand and pops them, to
// show that the changes of one object are kept together, in order, under one key. Part 2
// puts a reflector in front of it and pops slowly, so that changes pile up per key
// before they are applied to a cache. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/deltafifo"
	"github.com/kubeinternals/informers/examples/internal/stepmain"
	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/reflector"
)

func main() {
	namespace := flag.String("namespace", "default", "namespace whose ConfigMaps to queue")
	popEvery := flag.Duration("pop-every", 3*time.Second, "pause before each Pop, so that changes pile up")
	stepmain.Main(func(ctx context.Context, cfg *rest.Config, log *slog.Logger, out io.Writer) error {
		return run(ctx, cfg, log, out, *namespace, *popEvery)
	}, stepmain.Options{})
}

// printDeltas is the process function for Pop: one line per key, its deltas in order.
func printDeltas(out io.Writer, prefix string) deltafifo.PopProcessFunc[*corev1.ConfigMap] {
	return func(deltas deltafifo.Deltas[*corev1.ConfigMap], isInInitialList bool) error {
		parts := make([]string, 0, len(deltas))
		for _, d := range deltas {
			parts = append(parts, fmt.Sprintf("%s(rv=%s)", d.Type, d.Object.ResourceVersion))
		}
		last := deltas[len(deltas)-1].Object
		fmt.Fprintf(out, "%sPop %s: [%s] initial=%v\n", prefix, last.Name, strings.Join(parts, " "), isInInitialList)
		return nil
	}
}

func run(ctx context.Context, cfg *rest.Config, log *slog.Logger, out io.Writer, namespace string, popEvery time.Duration) error {
	// Part 1: by hand. Four changes to two objects become two queue entries.
	cm := func(name, rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, ResourceVersion: rv}}
	}
	q := deltafifo.NewDeltaFIFO(deltafifo.DeltaFIFOOptions[*corev1.ConfigMap]{})
	for _, err := range []error{q.Add(cm("a", "1")), q.Add(cm("b", "2")), q.Update(cm("a", "3")), q.Delete(cm("a", "4"))} {
		if err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "part 1: Add a, Add b, Update a, Delete a")
	for range 2 {
		if err := q.Pop(ctx, printDeltas(out, "  ")); err != nil {
			return err
		}
	}

	// Part 2: a reflector fills the queue; we pop slowly and apply each entry to a cache,
	// which is also the queue's KnownObjects (so a relist can tell what was deleted).
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	if err != nil {
		return err
	}
	lw, err := listwatch.NewForConfig[*corev1.ConfigMap](cfg, corev1.SchemeGroupVersion, listwatch.Options{Resource: "configmaps", Namespace: namespace, Scheme: scheme, Protobuf: true})
	if err != nil {
		return err
	}
	cache := indexer.New(indexer.Options[*corev1.ConfigMap]{})
	fifo := deltafifo.NewDeltaFIFO(deltafifo.DeltaFIFOOptions[*corev1.ConfigMap]{KnownObjects: cache})
	// The classic pipeline, by name: DeltaFIFO fed by a paged LIST, as the client-go
	// literature draws it. (An informer's zero options use a RealFIFO fed by a
	// watch-list instead; the DeltaFIFO's deltas would be the same.)
	r, err := reflector.NewReflector(lw, fifo, reflector.Options[*corev1.ConfigMap]{Logger: log, InitialList: reflector.PagedList})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "part 2: reflector → DeltaFIFO for configmaps in %q, one Pop every %s\n", namespace, popEvery)
	done := make(chan struct{})
	// Goroutine owned by run: the reflector; it exits when ctx ends, and run waits.
	go func() { defer close(done); r.Run(ctx) }()
	defer func() { <-done }()

	apply := printDeltas(out, "  ")
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintf(out, "stopped; the cache holds %d objects\n", len(cache.ListKeys()))
			return nil
		case <-time.After(popEvery):
		}
		err := fifo.Pop(ctx, func(deltas deltafifo.Deltas[*corev1.ConfigMap], initial bool) error {
			// What an informer's processLoop does: apply every delta, oldest first, to
			// the cache (an informer notifies its handlers after each one, so they see
			// the whole history; the cache ends at the newest state).
			for _, d := range deltas {
				if d.Type == deltafifo.Deleted {
					_ = cache.Delete(d.Object)
				} else {
					_ = cache.Update(d.Object)
				}
			}
			return apply(deltas, initial)
		})
		if err != nil && !errors.Is(err, ctx.Err()) && ctx.Err() == nil {
			return err
		}
	}
}
