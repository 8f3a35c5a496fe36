// Command 02-reflector-store runs a reflector — the LIST+WATCH loop of 01, automated —
// writing straight into a store (an indexer with no indexes). A wrapper around the store
// prints every call the reflector makes: one Replace per (re)list, then Add, Update and
// Delete per watch event. See README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/stepmain"
	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/reflector"
)

func main() {
	namespace := flag.String("namespace", "default", "namespace whose ConfigMaps to mirror")
	watchList := flag.Bool("watch-list", false, "fetch the state with a watch-list (the zero value, client-go 1.37's default) instead of a paged LIST")
	stepmain.Main(func(ctx context.Context, cfg *rest.Config, log *slog.Logger, out io.Writer) error {
		return run(ctx, cfg, log, out, *namespace, *watchList)
	}, stepmain.Options{})
}

// printingStore is the store the reflector writes to: it prints each call, then passes
// it on to the real store.
type printingStore struct {
	indexer.Indexer[*corev1.ConfigMap]
	out io.Writer
}

func (s printingStore) Replace(items []*corev1.ConfigMap, rv string) error {
	names := make([]string, 0, len(items))
	for _, cm := range items {
		names = append(names, cm.Name)
	}
	slices.Sort(names)
	fmt.Fprintf(s.out, "Replace  %d items at rv %s: %v\n", len(items), rv, names)
	return s.Indexer.Replace(items, rv)
}

func (s printingStore) Add(cm *corev1.ConfigMap) error {
	fmt.Fprintf(s.out, "Add      %s rv=%s\n", cm.Name, cm.ResourceVersion)
	return s.Indexer.Add(cm)
}

func (s printingStore) Update(cm *corev1.ConfigMap) error {
	fmt.Fprintf(s.out, "Update   %s rv=%s data=%v\n", cm.Name, cm.ResourceVersion, cm.Data)
	return s.Indexer.Update(cm)
}

func (s printingStore) Delete(cm *corev1.ConfigMap) error {
	fmt.Fprintf(s.out, "Delete   %s rv=%s\n", cm.Name, cm.ResourceVersion)
	return s.Indexer.Delete(cm)
}

// run mirrors the namespace's ConfigMaps into a store until ctx ends, then prints what
// the store holds.
func run(ctx context.Context, cfg *rest.Config, log *slog.Logger, out io.Writer, namespace string, watchList bool) error {
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	if err != nil {
		return err
	}
	client, err := listwatch.NewRESTClient(cfg, corev1.SchemeGroupVersion)
	if err != nil {
		return err
	}
	// The ListerWatcher is 01's two requests behind an interface; Protobuf asks for the
	// compact wire format built-in types support.
	lw, err := listwatch.New[*corev1.ConfigMap](client, listwatch.Options{
		Resource: "configmaps", Namespace: namespace, Scheme: scheme, Protobuf: true,
	})
	if err != nil {
		return err
	}
	store := indexer.New(indexer.Options[*corev1.ConfigMap]{})
	// Why PagedList, by name: this step automates 01's LIST then WATCH. The zero value
	// (reflector.WatchList, client-go 1.37's default) would fetch the same state as
	// one streamed WATCH instead — same Replace, same events after it; -watch-list
	// shows it.
	mode := reflector.PagedList
	if watchList {
		mode = reflector.WatchList
	}
	r, err := reflector.NewReflector(lw, printingStore{store, out}, reflector.Options[*corev1.ConfigMap]{Logger: log, InitialList: mode})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "reflector %s: %v then WATCH configmaps in %q\n", r.Name(), mode, namespace)
	// Run blocks: it lists, watches, re-watches on a clean end, relists on 410 Gone,
	// and backs off on errors — until ctx ends.
	r.Run(ctx)

	keys := store.ListKeys()
	slices.Sort(keys)
	fmt.Fprintf(out, "stopped at rv %s; the store holds %d: %v\n", r.LastSyncResourceVersion(), len(keys), keys)
	return nil
}
