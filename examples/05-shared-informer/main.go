// Command 05-shared-informer runs one shared informer for ConfigMaps with two handlers:
// "early", registered before Run, and "late", registered after the cache has synced.
// Both see every object exactly once as an add (late gets the cache replayed, flagged
// as part of the initial list), then the same live changes — from one watch and
// one cache. See README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/stepmain"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/listwatch"
)

func main() {
	namespace := flag.String("namespace", "default", "namespace whose ConfigMaps to watch")
	resync := flag.Duration("resync", 0, "resync period for the early handler (0: none)")
	stepmain.Main(func(ctx context.Context, cfg *rest.Config, log *slog.Logger, out io.Writer) error {
		return run(ctx, cfg, log, out, *namespace, *resync)
	}, stepmain.Options{})
}

// printer is a handler that prints each notification with its name.
func printer(out io.Writer, name string) informer.HandlerFuncs[*corev1.ConfigMap] {
	return informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap, initial bool) {
			fmt.Fprintf(out, "%-5s add    %s rv=%s initial=%v\n", name, cm.Name, cm.ResourceVersion, initial)
		},
		UpdateFunc: func(old, cm *corev1.ConfigMap) {
			kind := "update"
			if old.ResourceVersion == cm.ResourceVersion {
				kind = "resync" // same object re-delivered: nothing changed on the server
			}
			fmt.Fprintf(out, "%-5s %-6s %s rv=%s→%s\n", name, kind, cm.Name, old.ResourceVersion, cm.ResourceVersion)
		},
		DeleteFunc: func(d informer.DeletedObject[*corev1.ConfigMap]) {
			cm := d.OptionalObj // never nil here; with a tombstone, the last state this informer had
			fmt.Fprintf(out, "%-5s delete %s rv=%s inferred=%v\n", name, cm.Name, cm.ResourceVersion, d.FinalStateUnknown != nil)
		},
	}
}

func run(ctx context.Context, cfg *rest.Config, log *slog.Logger, out io.Writer, namespace string, resync time.Duration) error {
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	if err != nil {
		return err
	}
	lw, err := listwatch.NewForConfig[*corev1.ConfigMap](cfg, corev1.SchemeGroupVersion, listwatch.Options{Resource: "configmaps", Namespace: namespace, Scheme: scheme, Protobuf: true})
	if err != nil {
		return err
	}
	inf := informer.NewSharedIndexInformer(lw, informer.Options[*corev1.ConfigMap]{ResyncPeriod: resync, Logger: log})
	if _, err := inf.AddEventHandler(printer(out, "early")); err != nil {
		return err
	}

	done := make(chan struct{})
	// Goroutine owned by run: the informer; Run returns when ctx ends (after stopping
	// its reflector, loop and listeners), and run waits for it.
	go func() { defer close(done); inf.Run(ctx) }()
	defer func() { <-done }()
	if err := informer.WaitForCacheSync(ctx, inf); err != nil {
		return err
	}
	fmt.Fprintf(out, "synced: %d objects in the cache; adding the late handler\n", len(inf.Indexer().ListKeys()))

	// The late handler gets no resync (0): per-handler periods share one informer.
	none := time.Duration(0)
	reg, err := inf.AddEventHandlerWithOptions(printer(out, "late"), informer.HandlerOptions{ResyncPeriod: &none})
	if err != nil {
		return err
	}
	if err := informer.WaitForCacheSync(ctx, reg); err != nil {
		return err
	}
	fmt.Fprintln(out, "replay done for the late handler; watching")
	<-ctx.Done()
	return nil
}
