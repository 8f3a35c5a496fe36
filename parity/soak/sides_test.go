package soak

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/reflector"
	"github.com/kubeinternals/informers/shard"
)

// A side is one informer under test, with a fast and a slow handler.
type side struct {
	name string // e.g. "ours default via A"
	// shard is the part of the resource the informer holds; the zero Shard: all of it.
	shard shard.Shard
	// split names the split a sharded side belongs to with its siblings, e.g.
	// "ours sharded via A": their caches must partition the LIST. "" when unsharded.
	split    string
	synced   func() bool
	cache    func() map[string]string // key → resourceVersion
	stories  []*story
	shutdown func() // stops the informer and waits for its goroutines
}

// configuration is one way of running an informer: ours at its zero values (client-go
// 1.37's pipeline), ours on the classic pipeline, or client-go's own factory.
type configuration struct {
	name  string
	start func(ctx context.Context, cfg *rest.Config, ns string, logger *slog.Logger, stories []*story) (*side, error)
}

// shardedConfigurations are ours and client-go's on each of the n shards of
// Split(uid, n): ours with FactoryOptions.Shard (the selector, the check of every
// object, the fallback), client-go's factory with WithTweakListOptions setting the same
// ShardSelector (the server's filtering alone). Each configuration's sides are one
// split.
func shardedConfigurations(n int) ([]configuration, []shard.Shard, error) {
	shards, err := shard.Split(shard.UID, n)
	if err != nil {
		return nil, nil, err
	}
	var out []configuration
	for i, s := range shards {
		out = append(out, configuration{fmt.Sprintf("ours shard %d/%d", i, n), func(ctx context.Context, cfg *rest.Config, ns string, logger *slog.Logger, stories []*story) (*side, error) {
			sd, err := startOurs(ctx, cfg, ns, informer.FactoryOptions{Logger: logger, Shard: s}, stories)
			if sd != nil {
				sd.shard, sd.split = s, "ours sharded"
			}
			return sd, err
		}})
	}
	for i, s := range shards {
		out = append(out, configuration{fmt.Sprintf("client-go shard %d/%d", i, n), func(ctx context.Context, cfg *rest.Config, ns string, logger *slog.Logger, stories []*story) (*side, error) {
			sd, err := startClientGoWith(ctx, cfg, ns, stories, clientgoinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.ShardSelector = s.String() }))
			if sd != nil {
				sd.shard, sd.split = s, "client-go sharded"
			}
			return sd, err
		}})
	}
	return out, shards, nil
}

var configurations = []configuration{
	{"ours default", func(ctx context.Context, cfg *rest.Config, ns string, logger *slog.Logger, stories []*story) (*side, error) {
		return startOurs(ctx, cfg, ns, informer.FactoryOptions{Logger: logger}, stories)
	}},
	{"ours DeltaFIFO+LIST", func(ctx context.Context, cfg *rest.Config, ns string, logger *slog.Logger, stories []*story) (*side, error) {
		return startOurs(ctx, cfg, ns, informer.FactoryOptions{Logger: logger, Queue: informer.DeltaFIFOQueue, InitialList: reflector.PagedList}, stories)
	}},
	{"client-go default", startClientGo},
}

func startOurs(ctx context.Context, cfg *rest.Config, ns string, opts informer.FactoryOptions, stories []*story) (*side, error) {
	scheme, err := listwatch.NewScheme(corev1.AddToScheme)
	if err != nil {
		return nil, err
	}
	opts.Scheme = scheme
	f := informer.NewFactory(cfg, opts)
	inf, err := informer.For[*corev1.ConfigMap](f, informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: ns})
	if err != nil {
		return nil, err
	}
	for _, s := range stories {
		if _, err := inf.AddEventHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
			AddFunc:    func(cm *corev1.ConfigMap, _ bool) { s.added(keyOf(cm), cm.ResourceVersion) },
			UpdateFunc: func(old, cm *corev1.ConfigMap) { s.updated(keyOf(cm), old.ResourceVersion, cm.ResourceVersion) },
			DeleteFunc: func(d informer.DeletedObject[*corev1.ConfigMap]) {
				s.deleted(d.GetKey(), d.OptionalObj.ResourceVersion, d.FinalStateUnknown != nil)
			},
		}); err != nil {
			return nil, err
		}
	}
	f.Start(ctx)
	return &side{
		synced: inf.HasSynced,
		cache: func() map[string]string {
			out := map[string]string{}
			for _, cm := range inf.Indexer().List() {
				out[keyOf(cm)] = cm.ResourceVersion
			}
			return out
		},
		stories:  stories,
		shutdown: f.Shutdown,
	}, nil
}

// startClientGo runs client-go's informer for ConfigMaps as its generated factory
// builds it, at client-go 1.37's defaults. Its logs go where klog's do (the test points
// klog at the soak's log file).
func startClientGo(ctx context.Context, cfg *rest.Config, ns string, _ *slog.Logger, stories []*story) (*side, error) {
	return startClientGoWith(ctx, cfg, ns, stories)
}

// startClientGoWith is startClientGo with more factory options.
func startClientGoWith(ctx context.Context, cfg *rest.Config, ns string, stories []*story, opts ...clientgoinformers.SharedInformerOption) (*side, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	f := clientgoinformers.NewSharedInformerFactoryWithOptions(cs, 0, append([]clientgoinformers.SharedInformerOption{clientgoinformers.WithNamespace(ns)}, opts...)...)
	inf := f.Core().V1().ConfigMaps().Informer()
	for _, s := range stories {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
			AddFunc: func(obj any, _ bool) {
				cm := obj.(*corev1.ConfigMap)
				s.added(keyOf(cm), cm.ResourceVersion)
			},
			UpdateFunc: func(old, obj any) {
				s.updated(keyOf(obj.(*corev1.ConfigMap)), old.(*corev1.ConfigMap).ResourceVersion, obj.(*corev1.ConfigMap).ResourceVersion)
			},
			DeleteFunc: func(obj any) {
				switch d := obj.(type) {
				case *corev1.ConfigMap:
					s.deleted(keyOf(d), d.ResourceVersion, false)
				case cache.DeletedFinalStateUnknown:
					rv := ""
					if cm, ok := d.Obj.(*corev1.ConfigMap); ok {
						rv = cm.ResourceVersion
					}
					s.deleted(d.Key, rv, true)
				default:
					s.mu.Lock()
					s.violatedLocked("delete of a %T", obj)
					s.mu.Unlock()
				}
			},
		}); err != nil {
			return nil, err
		}
	}
	f.Start(ctx.Done())
	return &side{
		synced: inf.HasSynced,
		cache: func() map[string]string {
			out := map[string]string{}
			for _, obj := range inf.GetStore().List() {
				cm := obj.(*corev1.ConfigMap)
				out[keyOf(cm)] = cm.ResourceVersion
			}
			return out
		},
		stories:  stories,
		shutdown: f.Shutdown,
	}, nil
}

func keyOf(cm *corev1.ConfigMap) string { return fmt.Sprintf("%s/%s", cm.Namespace, cm.Name) }
