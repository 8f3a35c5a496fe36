// Command 04-indexer keeps the cluster's Pods in an indexer with a custom index,
// "byNode" (spec.nodeName), and answers "which pods run on node X?" from memory — the
// question the scheduler and kubelet-side controllers ask all the time. See README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/stepmain"
	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/reflector"
)

const byNode = "byNode"

func main() {
	namespace := flag.String("namespace", "", `namespace of the pods ("" = all)`)
	every := flag.Duration("print-every", 2*time.Second, "how often to print the index when it changed")
	stepmain.Main(func(ctx context.Context, cfg *rest.Config, log *slog.Logger, out io.Writer) error {
		return run(ctx, cfg, log, out, *namespace, *every)
	}, stepmain.Options{})
}

// podsByNode is the custom index function: a pod is filed under the node it is bound
// to. An unscheduled pod returns no value and so is in no set of this index.
func podsByNode(p *corev1.Pod) ([]string, error) {
	if p.Spec.NodeName == "" {
		return nil, nil
	}
	return []string{p.Spec.NodeName}, nil
}

// snapshot renders the index: each node (sorted) and the pod keys filed under it.
func snapshot(idx indexer.Indexer[*corev1.Pod]) (string, error) {
	nodes := idx.ListIndexFuncValues(byNode)
	slices.Sort(nodes)
	var b strings.Builder
	fmt.Fprintf(&b, "%d pods, %d nodes\n", len(idx.ListKeys()), len(nodes))
	for _, node := range nodes {
		keys, err := idx.IndexKeys(byNode, node) // sorted; ByIndex would return the pods
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "  %s: %v\n", node, keys)
	}
	return b.String(), nil
}

func run(ctx context.Context, cfg *rest.Config, log *slog.Logger, out io.Writer, namespace string, every time.Duration) error {
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	if err != nil {
		return err
	}
	lw, err := listwatch.NewForConfig[*corev1.Pod](cfg, corev1.SchemeGroupVersion, listwatch.Options{Resource: "pods", Namespace: namespace, Scheme: scheme, Protobuf: true})
	if err != nil {
		return err
	}
	// The index is kept up to date on every write: Add/Update/Delete refile the object.
	idx := indexer.New(indexer.Options[*corev1.Pod]{Indexers: indexer.Indexers[*corev1.Pod]{
		byNode:                 podsByNode,
		indexer.NamespaceIndex: indexer.MetaNamespaceIndexFunc[*corev1.Pod],
	}})
	r, err := reflector.NewReflector(lw, idx, reflector.Options[*corev1.Pod]{Logger: log})
	if err != nil {
		return err
	}
	done := make(chan struct{})
	// Goroutine owned by run: the reflector; it exits when ctx ends, and run waits.
	go func() { defer close(done); r.Run(ctx) }()
	defer func() { <-done }()

	tick := time.NewTicker(every)
	defer tick.Stop()
	last := ""
	for {
		select {
		case <-ctx.Done():
			s, err := snapshot(idx)
			fmt.Fprintf(out, "final: %s", s)
			return err
		case <-tick.C:
		}
		if r.LastSyncResourceVersion() == "" {
			continue // the first list (a watch-list, by default) has not been stored yet
		}
		s, err := snapshot(idx)
		if err != nil {
			return err
		}
		if s != last {
			fmt.Fprintf(out, "index at rv %s: %s", r.LastSyncResourceVersion(), s)
			last = s
		}
	}
}
