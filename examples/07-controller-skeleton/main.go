// Command 07-controller-skeleton is the shape of every controller: an informer whose
// handlers only enqueue keys, a rate-limited workqueue, and workers that read the
// cache by key and reconcile. Here "reconcile" prints what a ConfigMap holds, or that
// it is gone. Compare foo-controller, which is this skeleton plus real work.
// See README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/stepmain"
	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/workqueue"
)

func main() {
	namespace := flag.String("namespace", "default", "namespace whose ConfigMaps to reconcile")
	workers := flag.Int("workers", 2, "number of workers")
	stepmain.Main(func(ctx context.Context, cfg *rest.Config, log *slog.Logger, out io.Writer) error {
		return run(ctx, cfg, log, out, *namespace, *workers)
	}, stepmain.Options{})
}

func run(ctx context.Context, cfg *rest.Config, log *slog.Logger, out io.Writer, namespace string, workers int) error {
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	if err != nil {
		return err
	}
	f := informer.NewFactory(cfg, informer.FactoryOptions{Scheme: scheme, Logger: log})
	inf, err := informer.For[*corev1.ConfigMap](f, informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: namespace})
	if err != nil {
		return err
	}
	q := workqueue.NewRateLimitingQueue(workqueue.RateLimitingOptions[string]{Options: workqueue.Options{Name: "configmaps", Logger: log}})

	// 1. Handlers enqueue keys, never objects, and never do work themselves.
	enqueue := func(cm *corev1.ConfigMap) { q.Add(indexer.ObjectKey(cm.Namespace, cm.Name)) }
	reg, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap, _ bool) { enqueue(cm) },
		UpdateFunc: func(old, cm *corev1.ConfigMap) {
			if old.ResourceVersion != cm.ResourceVersion { // skip resyncs
				enqueue(cm)
			}
		},
		// A deleted object still has a key; the tombstone (a delete seen only by a
		// relist) carries the same last known object.
		DeleteFunc: func(d informer.DeletedObject[*corev1.ConfigMap]) { enqueue(d.OptionalObj) },
	})
	if err != nil {
		return err
	}

	// 2. Start the informers, and wait until the handler has seen the initial list.
	defer f.Shutdown()
	f.Start(ctx)
	if err := informer.WaitForCacheSync(ctx, reg); err != nil {
		q.ShutDown()
		return err
	}
	fmt.Fprintf(out, "synced; %d workers\n", workers)

	// 3. Workers: Get a key, reconcile from the cache, settle with the queue, Done.
	lister := inf.Lister()
	reconcile := func(key string) error {
		ns, name, err := indexer.SplitMetaNamespaceKey(key)
		if err != nil {
			return err
		}
		cm, err := lister.Namespace(ns).Get(name)
		if apierrors.IsNotFound(err) {
			fmt.Fprintf(out, "reconcile %s: gone\n", key)
			return nil
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "reconcile %s: rv=%s keys=%v\n", key, cm.ResourceVersion, slices.Sorted(maps.Keys(cm.Data)))
		return nil
	}
	var wg sync.WaitGroup
	for range workers {
		// Goroutine owned by run: one worker; it exits when the queue is shut down and
		// drained, and run waits for it.
		wg.Go(func() {
			for {
				key, shutdown := q.Get()
				if shutdown {
					return
				}
				if err := reconcile(key); err != nil {
					log.Error("reconcile failed; retrying", "key", key, "err", err)
					q.AddRateLimited(key)
				} else {
					q.Forget(key)
				}
				q.Done(key)
			}
		})
	}

	// 4. Stop: no new work, let the workers finish what they hold, then the informers.
	<-ctx.Done()
	q.ShutDown()
	wg.Wait()
	fmt.Fprintln(out, "workers stopped")
	return nil
}
