package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/foo-controller/artifacts"
	"github.com/kubeinternals/informers/examples/internal/cluster"
	"github.com/kubeinternals/informers/examples/internal/crd"
	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/listwatch"
	"github.com/kubeinternals/informers/trace"
)

// labAPIServerFlags are the local cluster's flags beyond testenv's defaults.
//
// Why podtemplates#0: with a watch cache, a watch from an old resourceVersion is
// answered from the cache's window of recent events, whatever etcd has compacted.
// Serving one resource straight from etcd lets the compaction scenario produce the
// 410 Gone that, on a busy cluster, comes from the window moving on. Nothing else in
// the lab uses PodTemplates.
var labAPIServerFlags = []string{"--watch-cache-sizes=podtemplates#0"}

// Lab is the cluster the scenarios run on, with the faults it can inject (Cut,
// Refuse, CompactEtcd, RestartAPIServer), and the namespaces a scenario made.
type Lab struct {
	*cluster.Cluster
	log *slog.Logger

	// fooCRDAt is when prepare saw the Foo CRD Established.
	fooCRDAt time.Time

	mu         sync.Mutex // guards namespaces
	namespaces []string   // created by the running scenario; guarded by mu

	// recordDir is -record's directory; "" when the lab does not record.
	recordDir string
	// recording receives the running scenario's events while the lab records: every
	// tracer the scenario builds, and its actions. nil otherwise. Set by run before
	// the scenario starts, reset after it returned; a tracer keeps the recording of
	// the scenario that built it.
	recording *trace.Recorder
	// lines sends the lab's log lines to the running scenario's recording (nil: no
	// log line is recorded).
	lines *logLines
}

// startLab starts the embedded local cluster with the lab's flags, or uses the
// cluster in $KUBECONFIG. stop stops what it started.
func startLab(ctx context.Context, log *slog.Logger, lines *logLines) (lab *Lab, stop func(), err error) {
	c, err := cluster.Start(ctx, cluster.Options{APIServerFlags: labAPIServerFlags, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	if !c.Local {
		log.Info("scenarios that inject faults are skipped")
	}
	return &Lab{Cluster: c, log: log, lines: lines}, c.Stop, nil
}

// Namespace creates a fresh namespace named after prefix (the server adds a
// suffix) and returns its name. It is deleted when ctx's scenario ends (see run).
func (l *Lab) Namespace(ctx context.Context, prefix string) (string, error) {
	core, err := l.Core()
	if err != nil {
		return "", err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "lab-" + prefix + "-"}}
	if err := core.Post().Resource("namespaces").Body(ns).Do(ctx).Into(ns); err != nil {
		return "", fmt.Errorf("creating a namespace: %w", err)
	}
	l.mu.Lock()
	l.namespaces = append(l.namespaces, ns.Name)
	l.mu.Unlock()
	return ns.Name, nil
}

// cleanUp deletes the namespaces the scenario created (best effort; the server
// finishes the deletion in the background).
func (l *Lab) cleanUp() {
	l.mu.Lock()
	nss := l.namespaces
	l.namespaces = nil
	l.mu.Unlock()
	core, err := l.Core()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, ns := range nss {
		_ = core.Delete().Resource("namespaces").Name(ns).Do(ctx).Error()
	}
}

// prepare readies the cluster for every scenario: it installs the Foo CRD the
// foo-controller scenarios need. Why at the start, not in those scenarios:
// kube-controller-manager's garbage collector learns of a new resource only when it
// re-reads discovery, every 30s, and cannot delete a Foo's Deployment before that;
// installed here, the Foos are known by the time callback-order deletes one.
func (l *Lab) prepare(ctx context.Context) error {
	if _, err := crd.InstallCRD(ctx, l.Direct, artifacts.CRD(), crd.Options{}); err != nil {
		return fmt.Errorf("installing the Foo CRD: %w", err)
	}
	l.fooCRDAt = time.Now()
	return nil
}

// begin is how a scenario starts: a core/v1 client on Direct and a fresh namespace
// named for prefix.
func (l *Lab) begin(ctx context.Context, prefix string) (*rest.RESTClient, string, error) {
	core, err := l.Core()
	if err != nil {
		return nil, "", err
	}
	ns, err := l.Namespace(ctx, prefix)
	return core, ns, err
}

// Core is a core/v1 REST client on Direct.
func (l *Lab) Core() (*rest.RESTClient, error) {
	c, _, err := kube.NewRESTClient(l.Direct, corev1.SchemeGroupVersion, nil, corev1.AddToScheme)
	return c, err
}

// Apps is an apps/v1 REST client on Direct.
func (l *Lab) Apps() (*rest.RESTClient, error) {
	c, _, err := kube.NewRESTClient(l.Direct, appsv1.SchemeGroupVersion, nil, appsv1.AddToScheme)
	return c, err
}

// Factory is an informer factory on Watched for the core and apps types, reporting
// to tracer.
func (l *Lab) Factory(tracer *trace.Tracer, opts informer.FactoryOptions) (*informer.Factory, error) {
	return l.factoryOn(l.Watched, tracer, opts)
}

// factoryOn is Factory on cfg.
func (l *Lab) factoryOn(cfg *rest.Config, tracer *trace.Tracer, opts informer.FactoryOptions) (*informer.Factory, error) {
	scheme, err := listwatch.NewScheme(corev1.AddToScheme, appsv1.AddToScheme)
	if err != nil {
		return nil, err
	}
	if opts.Scheme == nil {
		opts.Scheme = scheme
	}
	opts.Tracer = tracer
	return informer.NewFactory(cfg, opts), nil
}

// kinds keeps the events of the given kinds.
func kinds(events []trace.Event, ks ...trace.Kind) []trace.Event {
	return trace.Filter(events, func(e trace.Event) bool {
		for _, k := range ks {
			if e.Kind == k {
				return true
			}
		}
		return false
	})
}

// count counts the events matching keep.
func count(events []trace.Event, keep func(trace.Event) bool) int {
	return len(trace.Filter(events, keep))
}

// await polls cond every 20ms until it holds or within passes; what names the wait
// in the error.
func await(ctx context.Context, within time.Duration, what string, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting %s for %s: %w", within, what, ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// labLabel marks the objects a scenario creates. Why: kube-controller-manager puts a
// ConfigMap (kube-root-ca.crt) into every namespace; informers that select on this
// label see only the scenario's own objects, so their counts are exact.
const labLabel = "kubeinternals.io/lab"

// labelled is the informer.Resource of the lab's objects of a core/v1 resource
// ("secrets", "podtemplates") in ns: only what carries labLabel.
func labelled(ns, resource string) informer.Resource {
	return informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource(resource), Namespace: ns, LabelSelector: labLabel}
}

// configMaps is the informer.Resource of the lab's ConfigMaps in ns.
func configMaps(ns string) informer.Resource { return labelled(ns, "configmaps") }

// configMap is a ConfigMap in ns, labelled labLabel, with data k=v.
func configMap(ns, name string, data ...string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{labLabel: "true"}}, Data: map[string]string{}}
	for i := 0; i+1 < len(data); i += 2 {
		cm.Data[data[i]] = data[i+1]
	}
	return cm
}

// create POSTs obj into resource of ns and decodes the reply into obj.
func create(ctx context.Context, c rest.Interface, ns, resource string, obj runtime.Object) error {
	return c.Post().Namespace(ns).Resource(resource).Body(obj).Do(ctx).Into(obj)
}

// joinKeys is "a, b, c".
func joinKeys(keys []string) string { return strings.Join(keys, ", ") }

// awaitLong bounds a wait for the cluster to do something that takes it well under a
// second normally, allowing for a loaded machine and the reflector's backoff.
const awaitLong = 30 * time.Second

// cached reports whether key is in the informer's cache.
func cached[T indexer.Object](inf *informer.SharedIndexInformer[T], key string) func() bool {
	return func() bool {
		_, ok, _ := inf.Indexer().GetByKey(key)
		return ok
	}
}

// containsAll reports whether s contains every part.
func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// errText is err's message, or "nil".
func errText(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// reasonsOf joins the events' reasons: "new, deduplicated".
func reasonsOf(events []trace.Event) string {
	var out []string
	for _, e := range events {
		out = append(out, e.Reason)
	}
	return joinKeys(out)
}
